// libFuzzer target for the response decoders of the HTTP, JSON-lines and
// memcached codecs (workers/adapters/adapter.h Codec::Decode). Input layout:
// byte 0 bits 0, 2 and 3 = codec (bit 3 set: the HTTP origin codec, which
// decodes requests; else bit 2 set: memcached; else bit 0: 0 HTTP, 1 JSON
// lines); the rest as in codec_splits.h (the close with the last
// bytes, split points, the server's bytes). Feeding the bytes in those
// pieces must give the same responses, and the same decision to close, as
// feeding them all at once; nothing may crash.
#include <cstdint>
#include <memory>

#include "tests/fuzz/codec_splits.h"
#include "workers/adapters/adapter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  namespace workers = dualswarm::workers;
  std::unique_ptr<workers::Codec> codec = (data[0] & 8)   ? workers::MakeHttpOriginCodec({})
                                          : (data[0] & 4) ? workers::MakeMemcachedCodec()
                                          : (data[0] & 1) ? workers::MakeJsonLinesCodec()
                                                          : workers::MakeHttpCodec("fuzz");
  dualswarm::fuzz::CheckSplitsAgree(*codec, data, size);
  return 0;
}
