// sha256.cpp — see sha256.h. The standard's compression function, one 64-byte block at a time,
// read in place (only the padded tail is copied); on x86 CPUs with the SHA extensions (Intel
// since Ice Lake/Goldmont, AMD since Zen) the same function in their instructions. A cache hit
// checks the checksum of every record it reads, the Halide runtime's (about 300 KB) among them:
// the portable form took 2.7 ms of a fresh process's 8.5 ms first tc_compile, the SHA
// instructions about a tenth of that.
#include "support/sha256.h"

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define TC_SHA256_X86 1
#endif

namespace tc {
namespace {

alignas(16) constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

// `blocks` 64-byte blocks at `data` into the state `h`.
void compress_portable(uint32_t h[8], const unsigned char* data, size_t blocks) {
  for (; blocks > 0; --blocks, data += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; ++i)
      w[i] = uint32_t(data[4 * i]) << 24 | uint32_t(data[4 * i + 1]) << 16 | uint32_t(data[4 * i + 2]) << 8 |
             uint32_t(data[4 * i + 3]);
    for (int i = 16; i < 64; ++i) {
      uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; ++i) {
      uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
      uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      k = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e, h[5] += f, h[6] += g, h[7] += k;
  }
}

#ifdef TC_SHA256_X86
bool cpu_has_sha_extensions() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1)) return false;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (b & bit_SHA) != 0;
}

// The same as compress_portable with SHA-NI: the state as two vectors (a, b, e, f) and
// (c, d, g, h), sha256rnds2 doing two rounds, sha256msg1/msg2 the message schedule four words
// at a time (W[t] = s1(W[t-2]) + W[t-7] + s0(W[t-15]) + W[t-16]).
__attribute__((target("sha,sse4.1,ssse3"))) void compress_sha_ni(uint32_t h[8], const unsigned char* data,
                                                                 size_t blocks) {
  const __m128i big_endian = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i abcd = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h));       // lanes a b c d
  __m128i efgh = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + 4));   // lanes e f g h
  __m128i cdab = _mm_shuffle_epi32(abcd, 0xB1);
  __m128i hgfe = _mm_shuffle_epi32(efgh, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, hgfe, 8);     // lanes f e b a: (a, b, e, f) high to low
  __m128i cdgh = _mm_blend_epi16(hgfe, cdab, 0xF0);  // lanes h g d c
  for (; blocks > 0; --blocks, data += 64) {
    const __m128i abef_before = abef, cdgh_before = cdgh;
    __m128i w[4];
    for (int group = 0; group < 16; ++group) {  // rounds 4·group .. 4·group + 3
      __m128i& m = w[group % 4];
      if (group < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(data + 16 * group)), big_endian);
      } else {  // m held W[t-16..t-13]; w[+1] W[t-12..]; w[+2] W[t-8..]; w[+3] W[t-4..t-1]
        const __m128i& previous = w[(group + 3) % 4];
        __m128i sum = _mm_add_epi32(_mm_sha256msg1_epu32(m, w[(group + 1) % 4]),
                                    _mm_alignr_epi8(previous, w[(group + 2) % 4], 4));  // + W[t-7..t-4]
        m = _mm_sha256msg2_epu32(sum, previous);
      }
      __m128i k = _mm_add_epi32(m, _mm_load_si128(reinterpret_cast<const __m128i*>(kRound + 4 * group)));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_before);
    cdgh = _mm_add_epi32(cdgh, cdgh_before);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h), _mm_blend_epi16(feba, dchg, 0xF0));     // a b c d
  _mm_storeu_si128(reinterpret_cast<__m128i*>(h + 4), _mm_alignr_epi8(dchg, feba, 8));    // e f g h
}
#endif

using Compress = void (*)(uint32_t*, const unsigned char*, size_t);

Compress chosen_compress() {
#ifdef TC_SHA256_X86
  if (cpu_has_sha_extensions()) return compress_sha_ni;
#endif
  return compress_portable;
}

// The 32 bytes of the digest, big-endian words.
std::string digest(const std::string& data, Compress compress) {
  uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  size_t whole = data.size() / 64;
  compress(h, bytes, whole);
  // The tail: the last partial block, 0x80, zeros, the length in bits (one or two blocks).
  unsigned char tail[128] = {};
  size_t rest = data.size() - 64 * whole;
  for (size_t i = 0; i < rest; ++i) tail[i] = bytes[64 * whole + i];
  tail[rest] = 0x80;
  size_t tail_bytes = rest + 1 + 8 <= 64 ? 64 : 128;
  uint64_t bits = uint64_t(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_bytes - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  compress(h, tail, tail_bytes / 64);
  std::string out(32, '\0');
  for (int i = 0; i < 32; ++i) out[i] = static_cast<char>(h[i / 4] >> (24 - 8 * (i % 4)));
  return out;
}

std::string hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

}  // namespace

std::string sha256_bytes(const std::string& data) {
  static const Compress compress = chosen_compress();
  return digest(data, compress);
}

std::string sha256_hex(const std::string& data) { return hex(sha256_bytes(data)); }

std::string sha256_hex_portable(const std::string& data) { return hex(digest(data, compress_portable)); }

}  // namespace tc
