// RESP2 framing (the Redis serialization protocol, docs/adapters.md).
//
// Requests: the IR {"cmd": ["SET", "k", "v"]} (strings; ints are sent as
// their decimal text) is sent as a RESP array of bulk strings, the form
// every Redis command takes. Requests may be pipelined: replies come back
// in request order on the connection.
//
// Replies become typed values:
//   +OK\r\n            -> {"str": "OK"}       simple string
//   $3\r\nabc\r\n      -> {"bulk": "abc"}     bulk string
//   -ERR x\r\n         -> {"err": "ERR x"}    error
//   :3\r\n             -> {"int": 3}          integer
//   $-1\r\n, *-1\r\n   -> {"nil": true}       null bulk string, null array
//   *2\r\n...          -> {"arr": [...]}      array (nested)
// Simple and bulk strings stay apart because Redis documents which one each
// command answers (SET: simple string OK; GET: bulk string), so a spec can
// hold a server to it.
//
// Decoding is incremental: a partly received array is kept in the codec's
// state (its finished elements and what is still missing), a partly
// received line or bulk body stays in the buffer. Bounds (each exceeded ->
// malformed, with the bytes quoted): a line (type byte to CRLF) of at most
// kMaxLineBytes; a bulk string of at most kMaxBulkBytes; an array of at
// most kMaxArrayLen elements; arrays nested at most kMaxDepth deep; one
// reply at most kMaxReplyBytes on the wire (so the state held for a
// partial reply is bounded too).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "workers/adapters/adapter.h"
#include "workers/adapters/printable_sample.h"

namespace dualswarm::workers {
namespace {

// A simple string, error, integer or length line (Redis's own inline limit
// is 64 KiB).
constexpr size_t kMaxLineBytes = 64 * 1024;
// A bulk string (Redis's proto-max-bulk-len defaults to 512 MiB; a tester
// has no use for values that large).
constexpr int64_t kMaxBulkBytes = 16 * 1024 * 1024;
// Elements of one array.
constexpr int64_t kMaxArrayLen = 1024 * 1024;
// Arrays inside arrays.
constexpr size_t kMaxDepth = 64;
// The wire bytes of one reply, nested elements included.
constexpr size_t kMaxReplyBytes = 64 * 1024 * 1024;
// A request: arguments, and their bytes in all.
constexpr size_t kMaxRequestArgs = 1024 * 1024;
constexpr size_t kMaxRequestBytes = 64 * 1024 * 1024;

ir::Value Tagged(const char* tag, ir::Value v) { return ir::Value::Map({{tag, std::move(v)}}); }

class RespCodec : public Codec {
 public:
  absl::StatusOr<std::string> Encode(const ir::Value& q) override {
    const ir::Value* cmd = q.is_map() ? q.Find("cmd") : nullptr;
    if (cmd == nullptr || !cmd->is_list() || cmd->as_list().empty())
      return absl::InvalidArgumentError(
          absl::StrCat("a RESP request is {\"cmd\": [NAME, ARG, ...]}, not ", q.ToString().substr(0, 200)));
    const auto& args = cmd->as_list();
    if (args.size() > kMaxRequestArgs)
      return absl::InvalidArgumentError(absl::StrCat("a RESP request has at most ", kMaxRequestArgs, " arguments"));
    std::string out = absl::StrCat("*", args.size(), "\r\n");
    for (const ir::Value& a : args) {
      std::string text;
      if (a.is_string()) {
        text = a.as_string();
      } else if (a.is_int()) {
        text = absl::StrCat(a.as_int());
      } else {
        return absl::InvalidArgumentError(
            absl::StrCat("RESP arguments are strings or ints, not ", a.ToString().substr(0, 200)));
      }
      absl::StrAppend(&out, "$", text.size(), "\r\n", text, "\r\n");
      if (out.size() > kMaxRequestBytes)
        return absl::InvalidArgumentError(absl::StrCat("a RESP request is at most ", kMaxRequestBytes, " bytes"));
    }
    return out;
  }

  DecodeResult Decode(std::string* buf, bool eof, std::vector<ir::Value>* out) override {
    DecodeResult result;
    size_t pos = 0;
    while (result.malformed.empty()) {
      size_t before = pos;
      Step step = Next(*buf, &pos, &result.malformed);
      reply_bytes_ += pos - before;
      if (result.malformed.empty() && reply_bytes_ > kMaxReplyBytes) result.malformed = TooLong(*buf, before);
      if (step.kind == Step::kNeedMore || !result.malformed.empty()) break;
      if (step.kind == Step::kArrayOpened) continue;
      // A finished value: it ends an array element or a whole reply.
      ir::Value v = std::move(step.value);
      while (true) {
        if (stack_.empty()) {
          out->push_back(std::move(v));
          reply_bytes_ = 0;
          break;
        }
        Frame& top = stack_.back();
        top.items.push_back(std::move(v));
        if (static_cast<int64_t>(top.items.size()) < top.len) break;
        v = Tagged("arr", ir::Value::List(std::move(top.items)));
        stack_.pop_back();
      }
    }
    buf->erase(0, pos);
    if (result.malformed.empty()) {
      if (buf->size() + reply_bytes_ > kMaxReplyBytes) {
        result.malformed = TooLong(*buf, 0);
      } else if (eof && (!buf->empty() || !stack_.empty())) {
        result.malformed = absl::StrCat("connection closed inside a reply (bytes: ", PrintableSample(*buf), ")");
      }
    }
    // The pending element now starts at 0; when it waits for its CRLF, the
    // bytes it has are known to hold none.
    scanned_ = line_pending_ ? buf->size() : 0;
    if (!result.malformed.empty()) {
      buf->clear();
      stack_.clear();
      scanned_ = 0;
      reply_bytes_ = 0;
      result.close = true;
    }
    return result;
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<RespCodec>(); }

 private:
  struct Frame {
    int64_t len;  // elements the array declared
    std::vector<ir::Value> items;
  };
  struct Step {
    enum Kind { kNeedMore, kValue, kArrayOpened } kind = kNeedMore;
    ir::Value value;
  };

  // Parses one element at *pos: a scalar (kValue), an array header (pushed
  // on stack_; kArrayOpened, or kValue for an empty or null array), or
  // kNeedMore when its bytes have not all arrived (nothing consumed).
  Step Next(const std::string& buf, size_t* pos, std::string* malformed) {
    size_t start = *pos;
    line_pending_ = false;
    if (start >= buf.size()) return Step();
    char type = buf[start];
    absl::string_view whole(buf.data() + start, buf.size() - start);
    if (type != '+' && type != '-' && type != ':' && type != '$' && type != '*')
      return Bad(whole, "not a RESP2 type byte (+ - : $ *)", malformed);
    size_t crlf;
    if (!FindLineEnd(buf, start, &crlf, malformed)) return Step();
    absl::string_view line(buf.data() + start + 1, crlf - start - 1);
    size_t after = crlf + 2;
    switch (type) {
      case '+':
      case '-':
        if (line.find('\r') != absl::string_view::npos || line.find('\n') != absl::string_view::npos)
          return Bad(whole, "a CR or LF inside a simple string or error", malformed);
        *pos = after;
        return Value(Tagged(type == '+' ? "str" : "err", ir::Value::String(std::string(line))));
      case ':': {
        int64_t n;
        if (!ParseInt(line, &n)) return Bad(whole, "not a 64-bit integer after ':'", malformed);
        *pos = after;
        return Value(Tagged("int", ir::Value::Int(n)));
      }
      case '$':
        return Bulk(buf, start, line, after, pos, malformed);
      default:
        return ArrayHeader(whole, line, after, pos, malformed);
    }
  }

  // Sets *crlf to the end of the element's first line; false while it has
  // not arrived (or is too long: *malformed).
  bool FindLineEnd(const std::string& buf, size_t start, size_t* crlf, std::string* malformed) {
    // Bytes before scanned_ (left from the last call, where this element
    // started at 0) hold no CRLF; the last of them may be its CR.
    size_t from = std::max(start, scanned_ > 0 ? scanned_ - 1 : 0);
    scanned_ = 0;
    *crlf = buf.find("\r\n", from);
    const bool waiting = *crlf == std::string::npos;
    if (waiting) line_pending_ = true;
    const bool too_long = waiting ? buf.size() - start > kMaxLineBytes + 2 : *crlf - start - 1 > kMaxLineBytes;
    if (too_long)
      *malformed = absl::StrCat("a line longer than ", kMaxLineBytes,
                                " bytes (bytes: ", PrintableSample(absl::string_view(buf).substr(start)), ")");
    return !waiting && !too_long;
  }

  // A bulk string whose header line is `line`; its body starts at `after`.
  Step Bulk(const std::string& buf, size_t start, absl::string_view line, size_t after, size_t* pos,
            std::string* malformed) {
    absl::string_view whole(buf.data() + start, buf.size() - start);
    int64_t n;
    if (!ParseInt(line, &n) || n < -1) return Bad(whole, "not a bulk string length after '$'", malformed);
    if (n > kMaxBulkBytes)
      return Bad(whole, absl::StrCat("a bulk string longer than ", kMaxBulkBytes, " bytes"), malformed);
    if (n == -1) {
      *pos = after;
      return Value(Tagged("nil", ir::Value::Bool(true)));
    }
    size_t len = static_cast<size_t>(n);
    if (buf.size() - after < len + 2) {
      // Wait for the body; the header is parsed again then (it is short).
      if (buf.size() - start + reply_bytes_ > kMaxReplyBytes)
        return Bad(whole, absl::StrCat("a reply longer than ", kMaxReplyBytes, " bytes"), malformed);
      return Step();
    }
    if (buf.compare(after + len, 2, "\r\n") != 0) return Bad(whole, "a bulk string not followed by CRLF", malformed);
    *pos = after + len + 2;
    return Value(Tagged("bulk", ir::Value::String(buf.substr(after, len))));
  }

  // An array header: empty and null arrays are values, others open a frame.
  Step ArrayHeader(absl::string_view whole, absl::string_view line, size_t after, size_t* pos, std::string* malformed) {
    int64_t n;
    if (!ParseInt(line, &n) || n < -1) return Bad(whole, "not an array length after '*'", malformed);
    if (n > kMaxArrayLen)
      return Bad(whole, absl::StrCat("an array of more than ", kMaxArrayLen, " elements"), malformed);
    if (n > 0 && stack_.size() >= kMaxDepth)
      return Bad(whole, absl::StrCat("arrays nested more than ", kMaxDepth, " deep"), malformed);
    *pos = after;
    if (n == -1) return Value(Tagged("nil", ir::Value::Bool(true)));
    if (n == 0) return Value(Tagged("arr", ir::Value::List({})));
    stack_.push_back(Frame{n, {}});
    Step step;
    step.kind = Step::kArrayOpened;
    return step;
  }

  static Step Value(ir::Value v) {
    Step step;
    step.kind = Step::kValue;
    step.value = std::move(v);
    return step;
  }

  static Step Bad(absl::string_view whole, absl::string_view why, std::string* malformed) {
    *malformed = absl::StrCat(why, " (bytes: ", PrintableSample(whole), ")");
    return Step();
  }

  // RESP integers: an optional '-' and decimal digits, nothing else.
  static bool ParseInt(absl::string_view s, int64_t* n) {
    if (s.empty() || s.size() > 20) return false;
    for (size_t i = 0; i < s.size(); ++i)
      if (!(s[i] >= '0' && s[i] <= '9') && !(i == 0 && s[i] == '-' && s.size() > 1)) return false;
    return absl::SimpleAtoi(s, n);
  }

  std::string TooLong(const std::string& buf, size_t from) const {
    return absl::StrCat("a reply longer than ", kMaxReplyBytes,
                        " bytes (bytes: ", PrintableSample(absl::string_view(buf).substr(from)), ")");
  }

  std::vector<Frame> stack_;   // arrays being filled, outermost first (at most kMaxDepth)
  size_t reply_bytes_ = 0;     // bytes of the unfinished reply consumed so far
  size_t scanned_ = 0;         // a prefix of the pending buffer known to hold no CRLF
  bool line_pending_ = false;  // the last Next waited for a CRLF
};

}  // namespace

std::unique_ptr<Codec> MakeRespCodec() { return std::make_unique<RespCodec>(); }

}  // namespace dualswarm::workers
