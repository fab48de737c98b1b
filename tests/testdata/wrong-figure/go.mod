module example.com/wrong-figure

go 1.26
