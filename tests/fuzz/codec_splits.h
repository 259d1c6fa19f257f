// Split feeding for the codec fuzz targets (fuzz_codec, fuzz_resp): feeds a
// server's bytes to a Codec in the pieces the fuzz input names and at once,
// and aborts when the two disagree (responses, the decision to close, or
// why the bytes were malformed). Input layout after the caller's choice of
// codec:
//   byte 0: bit 1 = the peer's close arrives with the last bytes (else in a
//           call of its own); bits 4-7 = number of split points N (bits 0
//           and 2-3 are the caller's)
//   bytes 1..N: the lengths of the first N pieces (0-255 bytes each)
//   the rest: the bytes the server sends.
#ifndef DUALSWARM_TESTS_FUZZ_CODEC_SPLITS_H_
#define DUALSWARM_TESTS_FUZZ_CODEC_SPLITS_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::fuzz {

using ir::Value;

struct Decoded {
  std::vector<Value> responses;
  bool closed = false;
  // Why the bytes were malformed, without the quoted bytes (which show what
  // happened to be buffered, so they depend on the split).
  std::string malformed;
};

inline std::string WhyMalformed(const std::string& malformed) {
  return malformed.substr(0, malformed.find(" (bytes: "));
}

inline Decoded Feed(const workers::Codec& proto, absl::string_view bytes, const std::vector<size_t>& pieces,
                    bool eof_with_last, const Value* request = nullptr) {
  std::unique_ptr<workers::Codec> codec = proto.Clone();
  if (request != nullptr && !codec->Encode(*request).ok()) std::abort();  // the target's own request
  Decoded d;
  std::vector<Value> out;
  std::string buf;
  size_t pos = 0;
  for (size_t i = 0; i < pieces.size() && !d.closed; ++i) {
    buf.append(bytes.data() + pos, pieces[i]);
    pos += pieces[i];
    bool eof = eof_with_last && i + 1 == pieces.size();
    workers::DecodeResult r = codec->Decode(&buf, eof, &out);
    d.closed = r.close;
    d.malformed = WhyMalformed(r.malformed);
  }
  if (!eof_with_last && !d.closed) {
    workers::DecodeResult r = codec->Decode(&buf, true, &out);
    d.closed = r.close;
    d.malformed = WhyMalformed(r.malformed);
  }
  d.responses = std::move(out);
  return d;
}

inline std::string Describe(const Decoded& d) {
  std::string s = d.closed ? "closed;" : "open;";
  if (!d.malformed.empty()) s += " malformed: " + d.malformed + ";";
  for (const Value& v : d.responses) s += " " + v.ToString();
  return s;
}

// Everything the codec made of the bytes fed at once (the split feeding
// gave the same, or this aborted).
// `request`, when given, is encoded on each fresh codec first (replies that
// depend on what the connection sent).
inline Decoded CheckSplitsAgree(const workers::Codec& codec, const uint8_t* data, size_t size,
                                const Value* request = nullptr) {
  if (size < 1) return {};
  uint8_t flags = data[0];
  size_t n = std::min<size_t>(flags >> 4, size - 1);
  absl::string_view bytes(reinterpret_cast<const char*>(data) + 1 + n, size - 1 - n);
  std::vector<size_t> pieces;
  size_t left = bytes.size();
  for (size_t i = 0; i < n; ++i) {
    size_t len = std::min<size_t>(data[1 + i], left);
    pieces.push_back(len);
    left -= len;
  }
  pieces.push_back(left);
  bool eof_with_last = (flags & 2) != 0;
  Decoded whole = Feed(codec, bytes, {bytes.size()}, eof_with_last, request);
  Decoded split = Feed(codec, bytes, pieces, eof_with_last, request);
  if (whole.closed != split.closed || whole.malformed != split.malformed || whole.responses != split.responses) {
    std::fprintf(stderr, "split feeding differs from whole feeding\n  whole: %s\n  split: %s\n",
                 Describe(whole).c_str(), Describe(split).c_str());
    std::abort();
  }
  return whole;
}

}  // namespace dualswarm::fuzz

#endif  // DUALSWARM_TESTS_FUZZ_CODEC_SPLITS_H_
