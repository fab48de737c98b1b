module example.com/no-compile

go 1.26
