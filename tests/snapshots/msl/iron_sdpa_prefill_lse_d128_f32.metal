// not emitted for metal3.1: kernel iron_sdpa_prefill_lse_d128: needs 101376 bytes of threadgroup memory, more than the 32768 bytes target metal3.1 allows:
  @shm0: f32[8448] at bytes [0, 33792)
  @shm1: f32[8448] at bytes [33792, 67584)
  @shm2: f32[8448] at bytes [67584, 101376)
