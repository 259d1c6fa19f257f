// HTTP/1.1 framing: request IR {method, path, headers, body} -> bytes;
// bytes -> response IR {status, headers, body} with lowercased header
// names (repeated headers joined with ", "), Content-Length, chunked and
// close-delimited bodies, and 1xx interim responses skipped.
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "workers/adapters/adapter.h"

namespace dualswarm::workers {
namespace {

using ir::Value;

constexpr size_t kMaxHeaderBytes = 64 * 1024;
constexpr size_t kMaxBodyBytes = 16 * 1024 * 1024;

Value Malformed(const std::string& why, absl::string_view sample) {
  std::string s(sample.substr(0, 80));
  for (char& ch : s)
    if (!std::isprint(static_cast<unsigned char>(ch))) ch = '?';
  return Value::Map({{"status", Value::Int(0)},
                     {"headers", Value::Map({})},
                     {"body", Value::String("")},
                     {"malformed", Value::String(absl::StrCat(why, " (bytes: \"", s, "\")"))}});
}

bool ValidToken(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c <= ' ' || c >= 127 || c == ':') return false;
  return true;
}

class HttpCodec : public Codec {
 public:
  explicit HttpCodec(std::string host) : host_(std::move(host)) {}

  absl::StatusOr<std::string> Encode(const Value& q) override {
    const Value* method = q.Find("method");
    const Value* path = q.Find("path");
    if (method == nullptr || !method->is_string() || !ValidToken(method->as_string()))
      return absl::InvalidArgumentError(absl::StrCat("HTTP request needs a \"method\" token: ", q.ToString()));
    if (path == nullptr || !path->is_string() || path->as_string().empty() ||
        path->as_string().find_first_of(" \r\n") != std::string::npos)
      return absl::InvalidArgumentError(absl::StrCat("HTTP request needs a \"path\" without spaces: ", q.ToString()));
    std::string body;
    if (const Value* b = q.Find("body"); b != nullptr && b->is_string()) body = b->as_string();
    std::string out = absl::StrCat(method->as_string(), " ", path->as_string(), " HTTP/1.1\r\nhost: ", host_, "\r\n");
    if (const Value* h = q.Find("headers"); h != nullptr && h->is_map()) {
      for (const auto& [name, v] : h->as_map()) {
        if (!ValidToken(name)) return absl::InvalidArgumentError(absl::StrCat("bad header name \"", name, "\""));
        std::string value = v.is_string() ? v.as_string() : v.ToString();
        if (value.find_first_of("\r\n") != std::string::npos)
          return absl::InvalidArgumentError(absl::StrCat("header ", name, " contains a line break"));
        std::string lname = absl::AsciiStrToLower(name);
        if (lname == "host" || lname == "content-length" || lname == "transfer-encoding") continue;
        absl::StrAppend(&out, lname, ": ", value, "\r\n");
      }
    }
    std::string m = method->as_string();
    // Every third request with a body goes chunked (two chunks), so servers'
    // both framings get exercised; the IR the checker sees is the same.
    if (body.size() >= 2 && ++bodies_sent_ % 3 == 0) {
      size_t half = body.size() / 2;
      absl::StrAppend(&out, "transfer-encoding: chunked\r\n\r\n", absl::Hex(half), "\r\n",
                      body.substr(0, half), "\r\n", absl::Hex(body.size() - half), "\r\n",
                      body.substr(half), "\r\n0\r\n\r\n");
      return out;
    }
    if (!body.empty() || m == "PUT" || m == "POST") absl::StrAppend(&out, "content-length: ", body.size(), "\r\n");
    absl::StrAppend(&out, "\r\n", body);
    return out;
  }

  void Decode(std::string* buf, bool eof, std::vector<Value>* out, bool* close) override {
    while (true) {
      if (!have_head_) {
        size_t end = buf->find("\r\n\r\n");
        if (end == std::string::npos) {
          if (buf->size() > kMaxHeaderBytes) return Fail(buf, out, close, "response header block larger than 64 KiB");
          if (eof && !buf->empty()) return Fail(buf, out, close, "connection closed inside a response header");
          if (!buf->empty() && !LooksLikeStatusPrefix(*buf))
            return Fail(buf, out, close, "not an HTTP/1.x status line");
          return;
        }
        if (!ParseHead(buf->substr(0, end))) return Fail(buf, out, close, head_error_);
        buf->erase(0, end + 4);
        have_head_ = true;
        if (status_ >= 100 && status_ < 200) {  // interim response
          have_head_ = false;
          continue;
        }
      }
      // Body.
      if (status_ == 204 || status_ == 304) {
        Emit(out, "");
        continue;
      }
      if (chunked_) {
        std::string body;
        size_t used = 0;
        int r = ParseChunked(*buf, &body, &used);
        if (r < 0) return Fail(buf, out, close, "malformed chunked body");
        if (r == 0) {
          if (eof) return Fail(buf, out, close, "connection closed inside a chunked body");
          return;
        }
        buf->erase(0, used);
        Emit(out, std::move(body));
        continue;
      }
      if (length_ >= 0) {
        if (buf->size() < static_cast<size_t>(length_)) {
          if (eof) return Fail(buf, out, close, absl::StrCat("connection closed after ", buf->size(), " of ", length_, " body bytes"));
          return;
        }
        std::string body = buf->substr(0, static_cast<size_t>(length_));
        buf->erase(0, static_cast<size_t>(length_));
        Emit(out, std::move(body));
        continue;
      }
      // Close-delimited.
      if (!eof) {
        if (buf->size() > kMaxBodyBytes) return Fail(buf, out, close, "body larger than 16 MiB");
        return;
      }
      std::string body = std::move(*buf);
      buf->clear();
      Emit(out, std::move(body));
      *close = true;
      return;
    }
  }

  std::unique_ptr<Codec> Clone() const override { return std::make_unique<HttpCodec>(host_); }

 private:
  static bool LooksLikeStatusPrefix(const std::string& b) {
    static const std::string kPrefix = "HTTP/1.";
    size_t n = std::min(b.size(), kPrefix.size());
    return b.compare(0, n, kPrefix, 0, n) == 0;
  }

  void Fail(std::string* buf, std::vector<Value>* out, bool* close, const std::string& why) {
    out->push_back(Malformed(why, *buf));
    buf->clear();
    have_head_ = false;
    *close = true;
  }

  bool ParseHead(const std::string& head) {
    headers_ = Value::Map({});
    chunked_ = false;
    length_ = -1;
    size_t eol = head.find("\r\n");
    std::string line = head.substr(0, eol);
    if (line.size() < 12 || line.compare(0, 7, "HTTP/1.") != 0 || line[8] != ' ' ||
        !absl::SimpleAtoi(line.substr(9, 3), &status_) || status_ < 100 || status_ > 999 ||
        (line.size() > 12 && line[12] != ' ')) {
      head_error_ = absl::StrCat("bad status line \"", line.substr(0, 60), "\"");
      return false;
    }
    size_t pos = eol == std::string::npos ? head.size() : eol + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string h = head.substr(pos, e - pos);
      pos = e + 2;
      size_t colon = h.find(':');
      if (colon == std::string::npos || colon == 0 || !ValidToken(h.substr(0, colon))) {
        head_error_ = absl::StrCat("bad header line \"", h.substr(0, 60), "\"");
        return false;
      }
      std::string name = absl::AsciiStrToLower(h.substr(0, colon));
      std::string value(absl::StripAsciiWhitespace(h.substr(colon + 1)));
      if (const Value* prev = headers_.Find(name)) value = absl::StrCat(prev->as_string(), ", ", value);
      headers_ = headers_.Set(name, Value::String(value));
    }
    if (const Value* te = headers_.Find("transfer-encoding"))
      chunked_ = absl::AsciiStrToLower(te->as_string()).find("chunked") != std::string::npos;
    if (const Value* cl = headers_.Find("content-length"); cl != nullptr && !chunked_) {
      if (!absl::SimpleAtoi(cl->as_string(), &length_) || length_ < 0 ||
          length_ > static_cast<int64_t>(kMaxBodyBytes)) {
        head_error_ = absl::StrCat("bad content-length \"", cl->as_string(), "\"");
        return false;
      }
    }
    return true;
  }

  // 1 = complete, 0 = need more bytes, -1 = malformed.
  static int ParseChunked(const std::string& b, std::string* body, size_t* used) {
    size_t pos = 0;
    while (true) {
      size_t eol = b.find("\r\n", pos);
      if (eol == std::string::npos) return b.size() - pos > 1024 ? -1 : 0;
      std::string size_line = b.substr(pos, eol - pos);
      size_t semi = size_line.find(';');
      if (semi != std::string::npos) size_line = size_line.substr(0, semi);
      uint64_t n;
      if (!absl::SimpleHexAtoi(absl::StripAsciiWhitespace(size_line), &n) || n > kMaxBodyBytes) return -1;
      pos = eol + 2;
      if (n == 0) {
        // Trailers until an empty line.
        while (true) {
          size_t e = b.find("\r\n", pos);
          if (e == std::string::npos) return 0;
          if (e == pos) {
            *used = e + 2;
            return 1;
          }
          pos = e + 2;
        }
      }
      if (b.size() < pos + n + 2) return 0;
      if (b.compare(pos + n, 2, "\r\n") != 0) return -1;
      body->append(b, pos, n);
      if (body->size() > kMaxBodyBytes) return -1;
      pos += n + 2;
    }
  }

  void Emit(std::vector<Value>* out, std::string body) {
    out->push_back(Value::Map({{"status", Value::Int(status_)},
                               {"headers", headers_},
                               {"body", Value::String(std::move(body))}}));
    have_head_ = false;
  }

  std::string host_;
  uint64_t bodies_sent_ = 0;
  bool have_head_ = false;
  int status_ = 0;
  Value headers_;
  bool chunked_ = false;
  int64_t length_ = -1;
  std::string head_error_;
};

}  // namespace

std::unique_ptr<Codec> MakeHttpCodec(std::string host_header) {
  return std::make_unique<HttpCodec>(std::move(host_header));
}

}  // namespace dualswarm::workers
