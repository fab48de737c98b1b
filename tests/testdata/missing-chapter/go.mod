module example.com/missing-chapter

go 1.26
