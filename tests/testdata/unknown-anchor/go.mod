module example.com/unknown-anchor

go 1.26
