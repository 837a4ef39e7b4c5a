module chokepoint/targets/goh2client

go 1.26.0
