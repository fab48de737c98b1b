module example.com/test-fails

go 1.26
