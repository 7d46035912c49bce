// poison-shared's kernel: fills the dynamic shared memory of its block with
// all-ones words (NaN as float and as double). Compiled to PTX by
// scripts/stage-device.sh and loaded by poison.cpp through the driver.
extern "C" __global__ void keig_poison_shared(unsigned words) {
  extern __shared__ unsigned s[];
  volatile unsigned* v = s;  // stores that nothing reads: keep them
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) v[i] = 0xffffffffu;
}
