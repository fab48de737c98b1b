module example.com/unterminated-anchor

go 1.26
