module example.com/wrong-transcript

go 1.26
