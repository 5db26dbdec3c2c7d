// not emitted for metal3.1: kernel iron_conv2d: needs 61440 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: bf16[8192] at bytes [0, 16384)
  @shm1: bf16[8192] at bytes [16384, 32768)
  @shm2: f32[2112] at bytes [0, 8448)
  @shm3: bf16[7168] at bytes [32768, 47104)
  @shm4: bf16[7168] at bytes [47104, 61440)
