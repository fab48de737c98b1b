module example.com/claim-ran-nothing

go 1.26
