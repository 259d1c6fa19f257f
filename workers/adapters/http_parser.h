// HttpParser: incremental HTTP/1.1 message framing for both directions —
// responses (what the tester's clients receive) and requests (what an
// intermediary sends the tester playing its origin). Bytes go in as they
// arrive; complete messages come out as IR with lowercased header names
// (repeated fields joined with ", "):
//   response: {status, headers, body}   request: {method, path, headers, body}
// Bodies are framed by chunked coding or Content-Length (RFC 9112 §6.3); a
// response with neither, or whose transfer coding does not end in chunked,
// runs to the close, and one answering a HEAD request has none. A request
// with neither has no body; one whose transfer coding does not end in
// chunked is malformed. Interim (1xx) responses are
// skipped. Every part the peer controls is bounded (header block and
// trailer section 64 KiB, chunk-size line 1 KiB, body 16 MiB, a request's
// method 32 bytes) and exceeding a bound is malformed, naming it.
#ifndef DUALSWARM_WORKERS_ADAPTERS_HTTP_PARSER_H_
#define DUALSWARM_WORKERS_ADAPTERS_HTTP_PARSER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "engine/ir/value.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {

class HttpParser {
 public:
  enum class Kind { kResponse, kRequest };
  explicit HttpParser(Kind kind) : kind_(kind) {}

  // Responses only: the next request sent on the connection was a HEAD, so
  // its response has no body whatever its framing fields say (RFC 9110
  // §9.3.2). Called once per request, in the order they are sent.
  void RequestSent(bool head) { head_requests_.push_back(head); }

  // As Codec::Decode: takes complete messages off the front of *buf.
  DecodeResult Decode(std::string* buf, bool eof, std::vector<ir::Value>* out);

  // Requests only: whether the oldest request decoded and not yet asked
  // about keeps its connection open after its response (HTTP/1.1 without
  // a "close" connection option, or HTTP/1.0 with "keep-alive": RFC 9112
  // §9.3). Called once per request decoded, in order.
  bool NextRequestPersistent();

 private:
  enum class Step { kProgress, kNeedBytes };
  // Where in a message the next byte belongs.
  enum class Phase { kHead, kLengthBody, kChunkSize, kChunkData, kChunkEnd, kTrailers, kCloseDelimited };

  Step Advance(const std::string& buf, size_t* pos, bool eof, std::vector<ir::Value>* out, DecodeResult* r);
  Step AdvanceHead(absl::string_view rest, size_t* pos, bool eof, std::vector<ir::Value>* out, DecodeResult* r);
  Step AdvanceLengthBody(absl::string_view rest, size_t* pos, bool eof, std::vector<ir::Value>* out, DecodeResult* r);
  Step AdvanceChunkSize(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r);
  Step AdvanceChunkData(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r);
  Step AdvanceChunkEnd(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r);
  Step AdvanceTrailers(absl::string_view rest, size_t* pos, bool eof, std::vector<ir::Value>* out, DecodeResult* r);
  Step AdvanceCloseDelimited(absl::string_view rest, size_t* pos, bool eof, std::vector<ir::Value>* out,
                             DecodeResult* r);
  size_t Find(absl::string_view rest, absl::string_view needle);
  void Consume(size_t* pos, size_t n);
  Step Malformed(DecodeResult* r, absl::string_view why, absl::string_view bytes);
  void Reset();
  const char* What() const { return kind_ == Kind::kResponse ? "response" : "request"; }
  bool LooksLikeStartPrefix(absl::string_view b) const;
  bool ParseStartLine(const std::string& line);
  bool ParseHead(const std::string& head);
  bool Persistent() const;
  // Whether the message just parsed has no body at all.
  bool Bodiless() const;
  void Emit(std::vector<ir::Value>* out);

  const Kind kind_;
  std::deque<bool> head_requests_;  // kResponse: per request sent and not yet answered, whether it was a HEAD
  std::deque<bool> persistent_;     // kRequest: per request decoded and not yet asked about (NextRequestPersistent)
  bool http10_ = false;             // kRequest: the request being decoded is HTTP/1.0
  // The message being decoded.
  Phase phase_ = Phase::kHead;
  int status_ = 0;      // kResponse
  std::string method_;  // kRequest
  std::string target_;  // kRequest
  ir::Value headers_;
  bool chunked_ = false;
  int64_t length_ = -1;
  std::string body_;
  uint64_t chunk_left_ = 0;   // kChunkData: bytes of the current chunk still to come
  size_t trailer_bytes_ = 0;  // kTrailers: bytes of trailer fields so far
  size_t scanned_ = 0;        // bytes of the pending input already searched by Find
  std::string head_error_;
};

// Whether `s` is a non-empty HTTP token (a method or a field name).
bool IsHttpToken(absl::string_view s);

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_HTTP_PARSER_H_
