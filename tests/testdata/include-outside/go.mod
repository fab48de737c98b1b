module example.com/include-outside

go 1.26
