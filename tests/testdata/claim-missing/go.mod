module example.com/claim-missing

go 1.26
