
ë
hlo.queue.size.gaugeHLO programs queued per device.K
7523

device_ordinal
0

	core_type
tensor_coreİÓÔÍÀÚí˜K
7523

device_ordinal
1

	core_type
tensor_coreİÓÔÍÀÚí˜K
7523

device_ordinal
2

	core_type
tensor_coreİÓÔÍÀÚí˜K
7523

device_ordinal
3

	core_type
tensor_coreİÓÔÍÀÚí˜