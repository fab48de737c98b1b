module example.com/bad-snippet

go 1.26
