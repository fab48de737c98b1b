module example.com/unusual

go 1.26
