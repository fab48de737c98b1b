module example.com/bad-figure

go 1.26
