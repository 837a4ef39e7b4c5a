module chokepoint/tests/targets/go-transport

go 1.22
