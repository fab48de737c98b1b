module example.com/ansi

go 1.26
