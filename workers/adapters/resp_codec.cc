// RESP2 and RESP3 framing (the Redis serialization protocol,
// docs/adapters.md).
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
// RESP3 (Redis 6 and later, on a connection that sent HELLO 3): its types
// are accepted from that request on, and before it are malformed:
//   _\r\n             -> {"nil": true}       null
//   #t\r\n, #f\r\n    -> {"bool": true}      boolean
//   ,1.5\r\n          -> {"double": "1.5"}   double (its text: the IR has no fractions)
//   (3492890328409238509324850943850943825024385\r\n
//                      -> {"bignum": "3492..."}
//   !5\r\nERR x\r\n    -> {"err": "ERR x"}    blob error
//   =7\r\ntxt:abc\r\n  -> {"verbatim": {"format": "txt", "text": "abc"}}
//   %1\r\n+a\r\n:1\r\n  -> {"map": [[{"str": "a"}, {"int": 1}]]}  key/value pairs in order
//   ~2\r\n...         -> {"set": [...]}
// Push messages (>) and attributes (|) are not replies to a request; they
// are malformed here (a spec that never subscribes never gets them).
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

#include "absl/strings/match.h"
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
    if (IsHello3(args)) resp3_ = true;
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
        v = Aggregate(top.type, std::move(top.items));
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
    char type;    // '*' array, '%' map, '~' set
    int64_t len;  // elements it declared (a map: twice its pairs)
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
    bool resp2 = type == '+' || type == '-' || type == ':' || type == '$' || type == '*';
    bool resp3 = absl::string_view("_#,(!=%~").find(type) != absl::string_view::npos;
    if (resp3 && !resp3_) return Bad(whole, "a RESP3 type byte on a connection that did not send HELLO 3", malformed);
    if (type == '>' || type == '|')
      return Bad(whole, "a RESP3 push message or attribute (not a reply; not supported)", malformed);
    if (!resp2 && !resp3)
      return Bad(whole, resp3_ ? "not a RESP type byte" : "not a RESP2 type byte (+ - : $ *)", malformed);
    size_t crlf;
    if (!FindLineEnd(buf, start, &crlf, malformed)) return Step();
    absl::string_view line(buf.data() + start + 1, crlf - start - 1);
    size_t after = crlf + 2;
    switch (type) {
      case '$':
      case '!':
      case '=':
        return Bulk(buf, start, line, after, pos, malformed);
      case '*':
      case '%':
      case '~':
        return AggregateHeader(type, whole, line, after, pos, malformed);
      default:
        return Line(type, whole, line, after, pos, malformed);
    }
  }

  // A value that is its first line: simple string, error, integer, and
  // RESP3's null, boolean, double and big number.
  Step Line(char type, absl::string_view whole, absl::string_view line, size_t after, size_t* pos,
            std::string* malformed) {
    ir::Value v;
    switch (type) {
      case '+':
      case '-':
        if (line.find('\r') != absl::string_view::npos || line.find('\n') != absl::string_view::npos)
          return Bad(whole, "a CR or LF inside a simple string or error", malformed);
        v = Tagged(type == '+' ? "str" : "err", ir::Value::String(std::string(line)));
        break;
      case ':': {
        int64_t n;
        if (!ParseInt(line, &n)) return Bad(whole, "not a 64-bit integer after ':'", malformed);
        v = Tagged("int", ir::Value::Int(n));
        break;
      }
      case '_':
        if (!line.empty()) return Bad(whole, "a RESP3 null with data", malformed);
        v = Tagged("nil", ir::Value::Bool(true));
        break;
      case '#':
        if (line != "t" && line != "f") return Bad(whole, "a RESP3 boolean that is not t or f", malformed);
        v = Tagged("bool", ir::Value::Bool(line == "t"));
        break;
      case ',':
        if (!IsDouble(line)) return Bad(whole, "not a RESP3 double after ','", malformed);
        v = Tagged("double", ir::Value::String(std::string(line)));
        break;
      default:  // '('
        if (!IsBigNumber(line)) return Bad(whole, "not a RESP3 big number after '('", malformed);
        v = Tagged("bignum", ir::Value::String(std::string(line)));
        break;
    }
    *pos = after;
    return Value(std::move(v));
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

  // A bulk string (or RESP3 blob error '!' or verbatim string '=') whose
  // header line is `line`; its body starts at `after`.
  Step Bulk(const std::string& buf, size_t start, absl::string_view line, size_t after, size_t* pos,
            std::string* malformed) {
    absl::string_view whole(buf.data() + start, buf.size() - start);
    const char type = buf[start];
    int64_t n;
    if (!ParseInt(line, &n) || n < (type == '$' ? -1 : 0))
      return Bad(whole, absl::StrCat("not a ", KindName(type), " length after '", std::string(1, type), "'"),
                 malformed);
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
    std::string body = buf.substr(after, len);
    if (type == '=' && (body.size() < 4 || body[3] != ':'))
      return Bad(whole, "a RESP3 verbatim string without its 3-byte format and ':'", malformed);
    *pos = after + len + 2;
    if (type == '!') return Value(Tagged("err", ir::Value::String(std::move(body))));
    if (type == '=')
      return Value(Tagged("verbatim", ir::Value::Map({{"format", ir::Value::String(body.substr(0, 3))},
                                                      {"text", ir::Value::String(body.substr(4))}})));
    return Value(Tagged("bulk", ir::Value::String(std::move(body))));
  }

  // An aggregate's header (array '*', RESP3 map '%' or set '~'): empty
  // ones and the null array are values, others open a frame.
  Step AggregateHeader(char type, absl::string_view whole, absl::string_view line, size_t after, size_t* pos,
                       std::string* malformed) {
    int64_t n;
    const char* kind = KindName(type);
    if (!ParseInt(line, &n) || n < (type == '*' ? -1 : 0))
      return Bad(whole,
                 absl::StrCat("not ", type == '*' ? "an " : "a ", kind, " length after '", std::string(1, type), "'"),
                 malformed);
    if (n > kMaxArrayLen)
      return Bad(whole, absl::StrCat(type == '*' ? "an " : "a ", kind, " of more than ", kMaxArrayLen, " elements"),
                 malformed);
    // Maps and sets count as arrays here.
    if (n > 0 && stack_.size() >= kMaxDepth)
      return Bad(whole, absl::StrCat("arrays nested more than ", kMaxDepth, " deep"), malformed);
    *pos = after;
    if (n == -1) return Value(Tagged("nil", ir::Value::Bool(true)));
    if (n == 0) return Value(Aggregate(type, {}));
    stack_.push_back(Frame{type, type == '%' ? 2 * n : n, {}});
    Step step;
    step.kind = Step::kArrayOpened;
    return step;
  }

  // What a length-prefixed type byte introduces, for errors.
  static const char* KindName(char type) {
    switch (type) {
      case '$':
        return "bulk string";
      case '!':
        return "blob error";
      case '=':
        return "verbatim string";
      case '%':
        return "map";
      case '~':
        return "set";
      default:
        return "array";
    }
  }

  // A finished aggregate: a map's elements become [key, value] pairs.
  static ir::Value Aggregate(char type, std::vector<ir::Value> items) {
    if (type == '~') return Tagged("set", ir::Value::List(std::move(items)));
    if (type != '%') return Tagged("arr", ir::Value::List(std::move(items)));
    std::vector<ir::Value> pairs;
    pairs.reserve(items.size() / 2);
    for (size_t i = 0; i + 1 < items.size(); i += 2)
      pairs.push_back(ir::Value::List({std::move(items[i]), std::move(items[i + 1])}));
    return Tagged("map", ir::Value::List(std::move(pairs)));
  }

  // HELLO 3 (any case): the connection speaks RESP3 from its reply on.
  static bool IsHello3(const std::vector<ir::Value>& args) {
    return args.size() >= 2 && args[0].is_string() && absl::EqualsIgnoreCase(args[0].as_string(), "HELLO") &&
           ((args[1].is_string() && args[1].as_string() == "3") || (args[1].is_int() && args[1].as_int() == 3));
  }

  // RESP3 doubles: a decimal with optional sign, fraction and exponent, or
  // inf, -inf, nan.
  static bool IsDouble(absl::string_view s) {
    if (s == "inf" || s == "-inf" || s == "nan") return true;
    double d;
    return !s.empty() && s.size() <= 64 && s.find_first_not_of("0123456789+-.eE") == absl::string_view::npos &&
           absl::SimpleAtod(s, &d);
  }

  // RESP3 big numbers: an optional sign and decimal digits.
  static bool IsBigNumber(absl::string_view s) {
    if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
    return !s.empty() && s.find_first_not_of("0123456789") == absl::string_view::npos;
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
  bool resp3_ = false;         // the connection sent HELLO 3
};

}  // namespace

std::unique_ptr<Codec> MakeRespCodec() { return std::make_unique<RespCodec>(); }

}  // namespace dualswarm::workers
