
Ë
"tpu.runtime.hbm.memory.usage.bytesHBM memory used in bytes.A
7523

device_ordinal
0

	core_type
tensor_core€€€€$A
7523

device_ordinal
1

	core_type
tensor_core€€€€&A
7523

device_ordinal
2

	core_type
tensor_core€€€€%A
7523

device_ordinal
3

	core_type
tensor_core€€€€(