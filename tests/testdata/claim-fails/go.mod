module example.com/claim-fails

go 1.26
