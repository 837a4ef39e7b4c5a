module chokepoint/targets/gosemaphore

go 1.19
