module chokepoint/targets/gocpu

go 1.19
