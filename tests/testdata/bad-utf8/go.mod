module example.com/bad-utf8

go 1.26
