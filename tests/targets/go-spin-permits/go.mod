module chokepoint/targets/gospinpermits

go 1.19
