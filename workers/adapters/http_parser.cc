#include "workers/adapters/http_parser.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "workers/adapters/printable_sample.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;
constexpr size_t kMaxChunkSizeLineBytes = 1024;
constexpr size_t kMaxTrailerBytes = 64 * 1024;
constexpr size_t kMaxMethodBytes = 32;

}  // namespace

bool IsHttpToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c <= ' ' || c >= 127 || c == ':') return false;
  return true;
}

DecodeResult HttpParser::Decode(std::string* buf, bool eof, std::vector<Value>* out) {
  DecodeResult result;
  size_t pos = 0;  // bytes of *buf consumed so far
  while (result.malformed.empty()) {
    Step step = Advance(*buf, &pos, eof, out, &result);
    if (step == Step::kNeedBytes) break;
  }
  buf->erase(0, pos);
  if (!result.malformed.empty()) {
    buf->clear();
    Reset();
    result.close = true;
  }
  return result;
}

// Parses what it can of buf[*pos..] in the current phase, advancing *pos
// over the bytes it consumed.
HttpParser::Step HttpParser::Advance(const std::string& buf, size_t* pos, bool eof, std::vector<Value>* out,
                                     DecodeResult* r) {
  absl::string_view rest = absl::string_view(buf).substr(*pos);
  switch (phase_) {
    case Phase::kHead:
      return AdvanceHead(rest, pos, eof, out, r);
    case Phase::kLengthBody:
      return AdvanceLengthBody(rest, pos, eof, out, r);
    case Phase::kChunkSize:
      return AdvanceChunkSize(rest, pos, eof, r);
    case Phase::kChunkData:
      return AdvanceChunkData(rest, pos, eof, r);
    case Phase::kChunkEnd:
      return AdvanceChunkEnd(rest, pos, eof, r);
    case Phase::kTrailers:
      return AdvanceTrailers(rest, pos, eof, out, r);
    case Phase::kCloseDelimited:
      return AdvanceCloseDelimited(rest, pos, eof, out, r);
  }
  return Step::kNeedBytes;
}

HttpParser::Step HttpParser::AdvanceHead(absl::string_view rest, size_t* pos, bool eof, std::vector<Value>* out,
                                         DecodeResult* r) {
  // Judged the same whatever the split: the status line's start first,
  // then sizes (a partial block may hold 3 bytes of its terminator).
  if (!rest.empty() && !LooksLikeStartPrefix(rest))
    return Malformed(r, kind_ == Kind::kResponse ? "not an HTTP/1.x status line" : "not an HTTP request line", rest);
  size_t end = Find(rest, "\r\n\r\n");
  if (end == absl::string_view::npos) {
    if (rest.size() > kMaxHeaderBytes + 3)
      return Malformed(r, absl::StrCat(What(), " header block larger than ", kMaxHeaderBytes, " bytes"), rest);
    if (eof && !rest.empty()) return Malformed(r, absl::StrCat("connection closed inside a ", What(), " header"), rest);
    return Step::kNeedBytes;
  }
  if (end > kMaxHeaderBytes)
    return Malformed(r, absl::StrCat(What(), " header block larger than ", kMaxHeaderBytes, " bytes"), rest);
  if (!ParseHead(std::string(rest.substr(0, end)))) return Malformed(r, head_error_, rest);
  Consume(pos, end + 4);
  body_.clear();
  if (kind_ == Kind::kResponse && status_ >= 100 && status_ < 200) return Step::kProgress;  // interim: skipped
  if (Bodiless()) {
    Emit(out);
    return Step::kProgress;
  }
  phase_ = chunked_ ? Phase::kChunkSize : length_ >= 0 ? Phase::kLengthBody : Phase::kCloseDelimited;
  return Step::kProgress;
}

HttpParser::Step HttpParser::AdvanceLengthBody(absl::string_view rest, size_t* pos, bool eof, std::vector<Value>* out,
                                               DecodeResult* r) {
  size_t take = std::min(rest.size(), static_cast<size_t>(length_) - body_.size());
  body_.append(rest.data(), take);
  Consume(pos, take);
  if (body_.size() == static_cast<size_t>(length_)) {
    Emit(out);
    return Step::kProgress;
  }
  if (eof)
    return Malformed(r, absl::StrCat("connection closed after ", body_.size(), " of ", length_, " body bytes"), "");
  return Step::kNeedBytes;
}

HttpParser::Step HttpParser::AdvanceChunkSize(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r) {
  size_t eol = Find(rest, "\r\n");
  if (eol == absl::string_view::npos) {
    if (rest.size() > kMaxChunkSizeLineBytes + 1)  // + the CR of a CRLF still to come
      return Malformed(r, absl::StrCat("chunk-size line longer than ", kMaxChunkSizeLineBytes, " bytes"), rest);
    if (eof) return Malformed(r, "connection closed inside a chunked body", rest);
    return Step::kNeedBytes;
  }
  absl::string_view line = rest.substr(0, eol);
  if (eol > kMaxChunkSizeLineBytes)
    return Malformed(r, absl::StrCat("chunk-size line longer than ", kMaxChunkSizeLineBytes, " bytes"), rest);
  line = line.substr(0, line.find(';'));  // chunk extensions are ignored
  uint64_t n;
  if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(line), &n)) return Malformed(r, "bad chunk-size line", rest);
  if (n > kMaxBodyBytes - body_.size())
    return Malformed(r, absl::StrCat("chunked body larger than ", kMaxBodyBytes, " bytes"), rest);
  Consume(pos, eol + 2);
  chunk_left_ = n;
  trailer_bytes_ = 0;
  phase_ = n == 0 ? Phase::kTrailers : Phase::kChunkData;
  return Step::kProgress;
}

HttpParser::Step HttpParser::AdvanceChunkData(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r) {
  size_t take = std::min<uint64_t>(rest.size(), chunk_left_);
  body_.append(rest.data(), take);
  chunk_left_ -= take;
  Consume(pos, take);
  if (chunk_left_ == 0) {
    phase_ = Phase::kChunkEnd;
    return Step::kProgress;
  }
  if (eof) return Malformed(r, "connection closed inside a chunk", "");
  return Step::kNeedBytes;
}

HttpParser::Step HttpParser::AdvanceChunkEnd(absl::string_view rest, size_t* pos, bool eof, DecodeResult* r) {
  if (rest.size() < 2) {
    if (eof || (rest.size() == 1 && rest[0] != '\r')) return Malformed(r, "chunk data not followed by CRLF", rest);
    return Step::kNeedBytes;
  }
  if (rest.substr(0, 2) != "\r\n") return Malformed(r, "chunk data not followed by CRLF", rest);
  Consume(pos, 2);
  phase_ = Phase::kChunkSize;
  return Step::kProgress;
}

// Trailer fields after the last chunk are read and dropped, up to an
// empty line.
HttpParser::Step HttpParser::AdvanceTrailers(absl::string_view rest, size_t* pos, bool eof, std::vector<Value>* out,
                                             DecodeResult* r) {
  size_t eol = Find(rest, "\r\n");
  if (eol == absl::string_view::npos) {
    if (trailer_bytes_ + rest.size() > kMaxTrailerBytes)
      return Malformed(r, absl::StrCat("trailer section larger than ", kMaxTrailerBytes, " bytes"), rest);
    if (eof) return Malformed(r, "connection closed inside the trailer section", rest);
    return Step::kNeedBytes;
  }
  trailer_bytes_ += eol + 2;
  if (trailer_bytes_ > kMaxTrailerBytes)
    return Malformed(r, absl::StrCat("trailer section larger than ", kMaxTrailerBytes, " bytes"), rest);
  Consume(pos, eol + 2);
  if (eol == 0) Emit(out);
  return Step::kProgress;
}

HttpParser::Step HttpParser::AdvanceCloseDelimited(absl::string_view rest, size_t* pos, bool eof,
                                                   std::vector<Value>* out, DecodeResult* r) {
  if (body_.size() + rest.size() > kMaxBodyBytes)
    return Malformed(r, absl::StrCat("body larger than ", kMaxBodyBytes, " bytes"), "");
  body_.append(rest.data(), rest.size());
  Consume(pos, rest.size());
  if (!eof) return Step::kNeedBytes;
  Emit(out);
  r->close = true;
  return Step::kNeedBytes;
}

// Position of `needle` in `rest`, skipping the prefix an earlier call
// already searched (so a terminator arriving a byte at a time costs
// linear time).
size_t HttpParser::Find(absl::string_view rest, absl::string_view needle) {
  size_t from = scanned_ >= needle.size() ? scanned_ - (needle.size() - 1) : 0;
  size_t at = rest.find(needle, from);
  scanned_ = at == absl::string_view::npos ? rest.size() : 0;
  return at;
}

void HttpParser::Consume(size_t* pos, size_t n) {
  *pos += n;
  scanned_ = 0;
}

HttpParser::Step HttpParser::Malformed(DecodeResult* r, absl::string_view why, absl::string_view bytes) {
  r->malformed = bytes.empty() ? std::string(why) : absl::StrCat(why, " (bytes: ", PrintableSample(bytes), ")");
  return Step::kNeedBytes;
}

void HttpParser::Reset() {
  phase_ = Phase::kHead;
  body_.clear();
  scanned_ = 0;
}

// Whether the bytes so far can begin a start line: "HTTP/1." for a
// response; for a request, a method token (then a space).
bool HttpParser::LooksLikeStartPrefix(absl::string_view b) const {
  if (kind_ == Kind::kRequest) {
    // Only a method's length is looked at, so that bytes arriving one at a
    // time cost linear time.
    absl::string_view head = b.substr(0, kMaxMethodBytes + 1);
    absl::string_view method = head.substr(0, head.find(' '));
    if (method.size() > kMaxMethodBytes) return false;
    return method.size() == head.size() ? method.empty() || IsHttpToken(method) : IsHttpToken(method);
  }
  constexpr absl::string_view kPrefix = "HTTP/1.";
  size_t n = std::min(b.size(), kPrefix.size());
  return b.substr(0, n) == kPrefix.substr(0, n);
}

// A status line (kResponse) or a request line (kRequest).
bool HttpParser::ParseStartLine(const std::string& line) {
  if (kind_ == Kind::kResponse) {
    if (line.size() < 12 || line.compare(0, 7, "HTTP/1.") != 0 || line[8] != ' ' ||
        !absl::SimpleAtoi(line.substr(9, 3), &status_) || status_ < 100 || status_ > 999 ||
        (line.size() > 12 && line[12] != ' ')) {
      head_error_ = absl::StrCat("bad status line \"", line.substr(0, 60), "\"");
      return false;
    }
    return true;
  }
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos || sp2 == sp1 + 1 || !IsHttpToken(line.substr(0, sp1)) ||
      (line.compare(sp2 + 1, std::string::npos, "HTTP/1.1") != 0 &&
       line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") != 0)) {
    head_error_ = absl::StrCat("bad request line \"", line.substr(0, 60), "\"");
    return false;
  }
  http10_ = line.compare(sp2 + 1, std::string::npos, "HTTP/1.0") == 0;
  method_ = line.substr(0, sp1);
  target_ = line.substr(sp1 + 1, sp2 - sp1 - 1);
  return true;
}

bool HttpParser::ParseHead(const std::string& head) {
  std::map<std::string, std::string> fields;
  chunked_ = false;
  length_ = -1;
  size_t eol = head.find("\r\n");
  std::string line = head.substr(0, eol);
  if (!ParseStartLine(line)) return false;
  size_t pos = eol == std::string::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    if (e == std::string::npos) e = head.size();
    std::string h = head.substr(pos, e - pos);
    pos = e + 2;
    size_t colon = h.find(':');
    if (colon == std::string::npos || colon == 0 || !IsHttpToken(h.substr(0, colon))) {
      head_error_ = absl::StrCat("bad header line \"", h.substr(0, 60), "\"");
      return false;
    }
    std::string name = absl::AsciiStrToLower(h.substr(0, colon));
    absl::string_view value = absl::StripAsciiWhitespace(absl::string_view(h).substr(colon + 1));
    auto [it, fresh] = fields.try_emplace(std::move(name), value);
    if (!fresh) absl::StrAppend(&it->second, ", ", value);
  }
  std::vector<std::pair<std::string, Value>> entries;
  for (auto& [name, value] : fields) entries.emplace_back(name, Value::String(std::move(value)));
  headers_ = Value::Map(std::move(entries));
  // RFC 9112 §6.3: a transfer coding list ending in chunked frames the body
  // whatever Content-Length says; one ending otherwise makes a response's
  // body run to the close and a request malformed.
  if (const Value* te = headers_.Find("transfer-encoding")) {
    std::vector<absl::string_view> codings = absl::StrSplit(te->as_string(), ',');
    chunked_ = absl::AsciiStrToLower(absl::StripAsciiWhitespace(codings.back())) == "chunked";
    if (!chunked_ && kind_ == Kind::kRequest) {
      head_error_ =
          absl::StrCat("request transfer-encoding \"", te->as_string().substr(0, 60), "\" does not end in chunked");
      return false;
    }
    if (!chunked_) return true;  // a response: close-delimited
  }
  if (const Value* cl = headers_.Find("content-length"); cl != nullptr && !chunked_) {
    if (!absl::SimpleAtoi(cl->as_string(), &length_) || length_ < 0) {
      head_error_ = absl::StrCat("bad content-length \"", cl->as_string().substr(0, 60), "\"");
      return false;
    }
    if (length_ > static_cast<int64_t>(kMaxBodyBytes)) {
      head_error_ = absl::StrCat("content-length ", length_, " exceeds the ", kMaxBodyBytes, "-byte body bound");
      return false;
    }
  }
  return true;
}

bool HttpParser::NextRequestPersistent() {
  if (persistent_.empty()) return true;
  const bool p = persistent_.front();
  persistent_.pop_front();
  return p;
}

// Whether the request just parsed keeps its connection: by its version
// and the options its `connection` field lists (RFC 9112 §9.3).
bool HttpParser::Persistent() const {
  const Value* connection = headers_.Find("connection");
  const std::string options = connection != nullptr ? absl::AsciiStrToLower(connection->as_string()) : "";
  auto has = [&](absl::string_view option) {
    for (absl::string_view o : absl::StrSplit(options, ','))
      if (absl::StripAsciiWhitespace(o) == option) return true;
    return false;
  };
  if (has("close")) return false;
  return !http10_ || has("keep-alive");
}

bool HttpParser::Bodiless() const {
  if (kind_ == Kind::kRequest) return !chunked_ && length_ < 0;  // a request without framing has no body
  return status_ == 204 || status_ == 304 || (!head_requests_.empty() && head_requests_.front());
}

void HttpParser::Emit(std::vector<Value>* out) {
  if (kind_ == Kind::kRequest) {
    persistent_.push_back(Persistent());
    out->push_back(Value::Map({{"method", Value::String(method_)},
                               {"path", Value::String(target_)},
                               {"headers", headers_},
                               {"body", Value::String(std::move(body_))}}));
  } else {
    out->push_back(Value::Map(
        {{"status", Value::Int(status_)}, {"headers", headers_}, {"body", Value::String(std::move(body_))}}));
    if (!head_requests_.empty()) head_requests_.pop_front();
  }
  body_.clear();
  phase_ = Phase::kHead;
}

}  // namespace dualswarm::workers
