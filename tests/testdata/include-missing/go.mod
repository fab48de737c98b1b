module example.com/include-missing

go 1.26
