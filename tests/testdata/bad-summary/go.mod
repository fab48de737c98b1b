module example.com/bad-summary

go 1.26
