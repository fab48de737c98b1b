module example.com/runbook

go 1.26
