module example.com/memfsprog

go 1.26
