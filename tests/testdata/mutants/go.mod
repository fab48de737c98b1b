module example.com/mutants

go 1.26
