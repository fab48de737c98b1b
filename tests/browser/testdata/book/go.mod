module example.com/browserbook

go 1.26
