module example.com/longline

go 1.26
