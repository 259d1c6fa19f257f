// ds-ref-webdav: the reference WebDAV-style HTTP/1.1 server the online tester
// runs against specs/http_webdav.dspec, plus seeded bugs ("mutants").
//
// Resources live in memory, keyed by the request-target as sent. GET (and
// HEAD), PUT and DELETE follow RFC 9110 with strong ETags that change on
// every modification, If-Match (strong comparison, "*") and If-None-Match
// (weak comparison, "*"). The connection layer speaks HTTP/1.1 per RFC 9112:
// keep-alive, pipelining (answers in order per connection), Content-Length
// and chunked request bodies, `Expect: 100-continue`, and 400 + close on
// anything it cannot frame. Every mutant is listed in kHelp and MUTANTS.md.
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sut_net.h"

namespace {

const char kHelp[] =
    "usage: ds-ref-webdav [--port N] [--dir D] [--mutant N]\n"
    "\n"
    "A small WebDAV-style HTTP/1.1 server (GET/HEAD/PUT/DELETE with ETags and\n"
    "If-Match/If-None-Match) used as a system under test. Listens on 127.0.0.1\n"
    "only and prints \"listening on 127.0.0.1:PORT\" when ready.\n"
    "\n"
    "  --port N     TCP port (0, the default, picks a free one)\n"
    "  --dir D      working directory (created if missing; resources are kept in memory)\n"
    "  --mutant N   0 = correct server; N > 0 = seeded bug N:\n"
    "     1  GET of a missing resource answers 200 with an empty body instead of 404\n"
    "     2  If-None-Match uses strong comparison (W/\"t\" never matches: 200 instead of 304, PUT not 412)\n"
    "     3  PUT ignores If-Match\n"
    "     4  PUT writes to the wrong path (last character dropped)\n"
    "     5  PUT replacing a resource keeps its old ETag\n"
    "     6  GET answers 200 with the body where If-None-Match requires 304\n"
    "     7  GET 200 drops the last byte of the body (Content-Length matches the short body)\n"
    "     8  every 7th request is applied but never answered; that connection then stays open and silent\n"
    "     9  only one request is handled per read: a pipelined request waits until more bytes arrive\n"
    "    10  GET 200 sends a Content-Length one larger than the body\n"
    "    11  DELETE answers 204 but does not delete\n"
    "    12  DELETE of a missing resource answers 204 instead of 404\n"
    "    13  PUT replacing a resource answers 201 instead of 200/204\n"
    "    14  PUT ignores If-None-Match: * (overwrites an existing resource)\n"
    "    15  If-Match uses weak comparison (accepts W/\"t\" for \"t\")\n"
    "    16  stale reads: GET is served from a per-connection cache that other connections' writes do not update\n"
    "    17  If-Match: * fails (412) even though the resource exists\n"
    "    18  lost update: PUT/DELETE preconditions are checked against a validator snapshot refreshed at most once a "
    "second\n"
    "    19  write-behind: a PUT is acknowledged but applied only after the next request has been handled\n"
    "    20  304 carries the wrong ETag (the weak form W/\"t\" of the current tag)\n"
    "    21  after a replace, GET returns the previous body with the new ETag\n"
    "    22  GET ignores If-Match (200 instead of 412)\n"
    "    23  PUT creating a resource answers 204 instead of 201\n"
    "    24  DELETE ignores If-Match (deletes instead of 412)\n"
    "    25  the ETag is derived from the body length (equal-length replacements keep the same strong ETag)\n"
    "    26  conditional header names are matched case-sensitively (only \"If-Match\"/\"If-None-Match\")\n"
    "    27  a chunked request body keeps only its first chunk\n"
    "    28  GET of a resource with an empty body answers 404\n"
    "    29  PUT with If-Match on a missing resource creates it instead of 412\n"
    "    30  pipelined requests that arrive in one read are answered in reverse order\n"
    "    31  a PUT's 201/204 is decided as if a change another connection made to the path in the same\n"
    "        poll round had not happened yet (a rare race, as in Apache's mod_dav)\n";
constexpr int kMaxMutant = 31;

enum Mutant : int {
  kCorrect = 0,
  kMissing200 = 1,
  kInmStrong = 2,
  kPutIgnoresIfMatch = 3,
  kWrongPath = 4,
  kEtagUnchanged = 5,
  k200Not304 = 6,
  kBodyOffByOne = 7,
  kDropEvery7th = 8,
  kPipelineStall = 9,
  kWrongContentLength = 10,
  kDeleteNoop = 11,
  kDeleteMissing204 = 12,
  kReplace201 = 13,
  kPutIgnoresInmStar = 14,
  kIfMatchWeak = 15,
  kStaleConnCache = 16,
  kIfMatchStar412 = 17,
  kLostUpdate = 18,
  kWriteBehind = 19,
  k304WrongEtag = 20,
  kPreviousBody = 21,
  kGetIgnoresIfMatch = 22,
  kCreate204 = 23,
  kDeleteIgnoresIfMatch = 24,
  kEtagFromLength = 25,
  kHeaderCase = 26,
  kChunkedFirstOnly = 27,
  kEmptyIsMissing = 28,
  kIfMatchMissingTrue = 29,
  kPipelineReversed = 30,
  kStatusRace = 31,
};

constexpr size_t kMaxHeaderBytes = 64u << 10;
constexpr size_t kMaxHeaders = 100;
constexpr size_t kMaxBody = 64u << 20;
constexpr size_t kMaxChunkLine = 4096;

// ---------------------------------------------------------------- messages

struct Header {
  std::string name;  // lowercased
  std::string raw_name;
  std::string value;  // OWS trimmed
};

struct Request {
  std::string method;
  std::string target;
  int minor = 1;  // HTTP/1.minor
  std::vector<Header> headers;
  std::string body;
  bool keep_alive = true;
};

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::optional<size_t> content_length_override;  // mutant 10 only
};

// Values of every field named `lname`, combined with ", " (RFC 9110 §5.3).
std::optional<std::string> GetHeader(const Request& q, std::string_view lname) {
  std::optional<std::string> v;
  for (const Header& h : q.headers) {
    if (h.name != lname) continue;
    if (v)
      *v += ", " + h.value;
    else
      v = h.value;
  }
  return v;
}
std::optional<std::string> GetHeaderExactCase(const Request& q, std::string_view name) {
  std::optional<std::string> v;
  for (const Header& h : q.headers) {
    if (h.raw_name != name) continue;
    if (v)
      *v += ", " + h.value;
    else
      v = h.value;
  }
  return v;
}

bool IsTchar(unsigned char ch) {
  return std::isalnum(ch) || (ch != 0 && std::strchr("!#$%&'*+-.^_`|~", ch) != nullptr);
}
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char ch : s)
    if (!IsTchar(ch)) return false;
  return true;
}
std::string Lower(std::string_view s) {
  std::string r(s);
  for (char& ch : r) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return r;
}
std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}
// Comma-separated list members, OWS trimmed, empty members dropped.
std::vector<std::string> SplitList(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      std::string_view m = TrimOws(s.substr(start, i - start));
      if (!m.empty()) out.emplace_back(m);
      start = i + 1;
    }
  }
  return out;
}

const char* Reason(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 417:
      return "Expectation Failed";
    case 431:
      return "Request Header Fields Too Large";
    case 501:
      return "Not Implemented";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

std::string HttpDate() {
  char buf[64];
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

// Serialises a response (RFC 9112 §4, §6). No Content-Length or body for
// 1xx/204/304; no body (but the length) for a response to HEAD.
std::string Serialize(const Response& r, bool head, bool close) {
  std::string out = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) + "\r\n";
  bool no_body_status = r.status < 200 || r.status == 204 || r.status == 304;
  if (r.status >= 200) {
    out += "Date: " + HttpDate() + "\r\n";
    out += "Server: ds-ref-webdav\r\n";
  }
  for (const auto& [n, v] : r.headers) out += n + ": " + v + "\r\n";
  if (!no_body_status) {
    size_t len = r.content_length_override ? *r.content_length_override : r.body.size();
    out += "Content-Length: " + std::to_string(len) + "\r\n";
  }
  if (close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!no_body_status && !head) out += r.body;
  return out;
}

Response Simple(int status, std::string body = "") {
  Response r;
  r.status = status;
  if (!body.empty()) {
    r.body = std::move(body) + "\n";
    r.headers.emplace_back("Content-Type", "text/plain");
  }
  return r;
}

// -------------------------------------------------------- entity tags

bool IsWeak(std::string_view t) { return t.size() >= 2 && t[0] == 'W' && t[1] == '/'; }
std::string_view Opaque(std::string_view t) { return IsWeak(t) ? t.substr(2) : t; }
// RFC 9110 §8.8.3.2.
bool StrongMatch(std::string_view a, std::string_view b) { return !IsWeak(a) && !IsWeak(b) && a == b; }
bool WeakMatch(std::string_view a, std::string_view b) { return Opaque(a) == Opaque(b); }

// RFC 9110 §8.8.3: entity-tag = [ W/ ] DQUOTE *etagc DQUOTE.
bool IsEntityTag(std::string_view t) {
  std::string_view o = Opaque(t);
  if (o.size() < 2 || o.front() != '"' || o.back() != '"') return false;
  for (size_t i = 1; i + 1 < o.size(); ++i) {
    unsigned char ch = static_cast<unsigned char>(o[i]);
    if (!(ch == 0x21 || (ch >= 0x23 && ch <= 0x7e) || ch >= 0x80)) return false;
  }
  return true;
}

// ------------------------------------------------------------ the server

struct File {
  std::string body;
  std::string etag;
  std::string prev_body;  // mutant 21
  bool has_prev = false;
};

// Incremental request parser state, one per connection.
struct Parser {
  enum class Phase { kHead, kFixedBody, kChunkSize, kChunkData, kChunkDataEnd, kTrailers };
  Phase phase = Phase::kHead;
  Request req;
  size_t remaining = 0;  // bytes of the fixed body / current chunk
  int chunks = 0;
  bool chunked = false;
  bool expect_continue = false;
  bool continue_sent = false;
};

struct ConnState {
  uint64_t id = 0;  // the connection's
  Parser parser;
  bool muted = false;  // mutant 8
  // Mutant 16: what this connection last saw or wrote per path (nullopt =
  // known missing).
  std::unordered_map<std::string, std::optional<File>> cache;
};

struct ParseError {
  int status;
  std::string why;
};

class WebdavServer : public dsut::PerConnectionHandler<ConnState> {
 public:
  explicit WebdavServer(int mutant) : m_(mutant) {
    std::random_device rd;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    etag_prefix_ = buf;
  }

  void OnInput(dsut::Conn& c) override {
    ConnState& st = StateOf(c);
    st.id = c.id;
    size_t pos = 0;                  // consumed prefix of c.in
    std::vector<std::string> batch;  // mutant 30: this read's responses
    int handled = 0;
    while (!c.close_after_flush) {
      if (st.muted) {
        pos = c.in.size();  // mutant 8: read and ignore everything
        break;
      }
      if (m_ == kPipelineStall && handled == 1) break;
      std::optional<ParseError> err;
      bool done = false;
      if (!Advance(c, st.parser, pos, &done, &err)) break;  // need more bytes
      if (err) {
        Response r = Simple(err->status, err->why);
        Emit(c, Serialize(r, false, true), batch);
        c.close_after_flush = true;
        break;
      }
      if (!done) continue;
      Request q = std::move(st.parser.req);
      st.parser = Parser();
      ++handled;
      ++requests_;
      bool head = q.method == "HEAD";
      Response r = Handle(q, st);
      ApplyWriteBehind(q);
      if (m_ == kDropEvery7th && requests_ % 7 == 0) {
        st.muted = true;  // applied, never answered, connection kept open
        continue;
      }
      bool close = !q.keep_alive;
      Emit(c, Serialize(r, head, close), batch);
      if (close) c.close_after_flush = true;
    }
    c.in.erase(0, pos);
    if (m_ == kPipelineReversed && batch.size() > 1) {
      for (auto it = batch.rbegin(); it != batch.rend(); ++it) c.out += *it;
    } else {
      for (auto& s : batch) c.out += s;
    }
    // RFC 9110 §10.1.1: the client waits for "100 Continue" before sending
    // the body it announced; send it once, after every earlier response.
    Parser& p = st.parser;
    if (!c.close_after_flush && !st.muted && p.phase != Parser::Phase::kHead && p.expect_continue && !p.continue_sent) {
      p.continue_sent = true;
      c.out += "HTTP/1.1 100 Continue\r\n\r\n";
    }
  }

 private:
  bool M(int n) const { return m_ == n; }

  void Emit(dsut::Conn& c, std::string bytes, std::vector<std::string>& batch) {
    if (m_ == kPipelineReversed)
      batch.push_back(std::move(bytes));
    else
      c.out += bytes;
  }

  // Advances the parser over c.in[pos..]. Returns false when more bytes are
  // needed; otherwise sets *done when a whole request is in p.req, or *err.
  bool Advance(dsut::Conn& c, Parser& p, size_t& pos, bool* done, std::optional<ParseError>* err) {
    const std::string& in = c.in;
    auto take_line = [&](size_t limit, std::string_view* line, bool* too_long) {
      size_t nl = in.find('\n', pos);
      if (nl == std::string::npos) {
        *too_long = in.size() - pos > limit;
        return false;
      }
      if (nl - pos > limit) {
        *too_long = true;
        return false;
      }
      size_t end = nl;
      if (end > pos && in[end - 1] == '\r') --end;
      *line = std::string_view(in).substr(pos, end - pos);
      pos = nl + 1;
      return true;
    };
    switch (p.phase) {
      case Parser::Phase::kHead: {
        // RFC 9112 §2.2: ignore empty lines before the request-line.
        while (pos < in.size() && (in[pos] == '\r' || in[pos] == '\n')) {
          if (in[pos] == '\r' && (pos + 1 >= in.size())) return false;
          if (in[pos] == '\r' && in[pos + 1] != '\n') {
            *err = ParseError{400, "bad request line"};
            return true;
          }
          pos += in[pos] == '\r' ? 2 : 1;
        }
        // Find the end of the header section without consuming.
        size_t scan = pos;
        size_t lines = 0;
        for (;;) {
          size_t nl = in.find('\n', scan);
          if (nl == std::string::npos) {
            if (in.size() - pos > kMaxHeaderBytes) *err = ParseError{431, "header section too large"};
            return err->has_value();
          }
          if (nl - pos > kMaxHeaderBytes) {
            *err = ParseError{431, "header section too large"};
            return true;
          }
          bool empty = nl == scan || (nl == scan + 1 && in[scan] == '\r');
          scan = nl + 1;
          if (empty) break;
          if (++lines > kMaxHeaders + 1) {
            *err = ParseError{431, "too many header fields"};
            return true;
          }
        }
        std::string_view line;
        bool too_long = false;
        take_line(kMaxHeaderBytes, &line, &too_long);
        if (!ParseRequestLine(line, &p.req, err)) return true;
        for (;;) {
          take_line(kMaxHeaderBytes, &line, &too_long);
          if (line.empty()) break;
          if (!ParseHeaderLine(line, &p.req, err)) return true;
        }
        if (!FrameBody(p, err)) return true;
        if (p.phase == Parser::Phase::kHead) {  // no body
          *done = true;
          return true;
        }
        return true;
      }
      case Parser::Phase::kFixedBody: {
        size_t n = std::min(p.remaining, in.size() - pos);
        p.req.body.append(in, pos, n);
        pos += n;
        p.remaining -= n;
        if (p.remaining == 0) {
          *done = true;
          return true;
        }
        return false;
      }
      case Parser::Phase::kChunkSize: {
        std::string_view line;
        bool too_long = false;
        if (!take_line(kMaxChunkLine, &line, &too_long)) {
          if (too_long) {
            *err = ParseError{400, "chunk-size line too long"};
            return true;
          }
          return false;
        }
        size_t semi = line.find(';');
        std::string_view hex = TrimOws(line.substr(0, semi));
        if (hex.empty() || hex.size() > 15) {
          *err = ParseError{400, "bad chunk size"};
          return true;
        }
        size_t size = 0;
        for (char ch : hex) {
          int d = std::isdigit(static_cast<unsigned char>(ch)) ? ch - '0'
                  : (ch >= 'a' && ch <= 'f')                   ? ch - 'a' + 10
                  : (ch >= 'A' && ch <= 'F')                   ? ch - 'A' + 10
                                                               : -1;
          if (d < 0) {
            *err = ParseError{400, "bad chunk size"};
            return true;
          }
          size = size * 16 + static_cast<size_t>(d);
        }
        if (size == 0) {
          p.phase = Parser::Phase::kTrailers;
          return true;
        }
        if (size > kMaxBody || p.req.body.size() + size > kMaxBody) {
          *err = ParseError{413, "request body too large"};
          return true;
        }
        p.remaining = size;
        p.phase = Parser::Phase::kChunkData;
        return true;
      }
      case Parser::Phase::kChunkData: {
        size_t n = std::min(p.remaining, in.size() - pos);
        if (!(M(kChunkedFirstOnly) && p.chunks > 0)) p.req.body.append(in, pos, n);
        pos += n;
        p.remaining -= n;
        if (p.remaining > 0) return false;
        ++p.chunks;
        p.phase = Parser::Phase::kChunkDataEnd;
        return true;
      }
      case Parser::Phase::kChunkDataEnd: {
        if (pos < in.size() && in[pos] == '\n') {
          pos += 1;
        } else if (in.size() - pos >= 2) {
          if (in[pos] != '\r' || in[pos + 1] != '\n') {
            *err = ParseError{400, "chunk data not followed by CRLF"};
            return true;
          }
          pos += 2;
        } else {
          if (pos < in.size() && in[pos] != '\r') {
            *err = ParseError{400, "chunk data not followed by CRLF"};
            return true;
          }
          return false;
        }
        p.phase = Parser::Phase::kChunkSize;
        return true;
      }
      case Parser::Phase::kTrailers: {
        std::string_view line;
        bool too_long = false;
        if (!take_line(kMaxHeaderBytes, &line, &too_long)) {
          if (too_long) {
            *err = ParseError{431, "trailer section too large"};
            return true;
          }
          return false;
        }
        if (line.empty()) *done = true;  // trailer fields are ignored
        return true;
      }
    }
    return false;
  }

  static bool ParseRequestLine(std::string_view line, Request* q, std::optional<ParseError>* err) {
    size_t sp1 = line.find(' ');
    size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
      *err = ParseError{400, "malformed request line"};
      return false;
    }
    std::string_view method = line.substr(0, sp1);
    std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    std::string_view version = line.substr(sp2 + 1);
    if (!IsToken(method)) {
      *err = ParseError{400, "malformed method"};
      return false;
    }
    if (target.empty()) {
      *err = ParseError{400, "empty request-target"};
      return false;
    }
    for (unsigned char ch : target) {
      if (ch <= 0x20 || ch == 0x7f) {
        *err = ParseError{400, "malformed request-target"};
        return false;
      }
    }
    if (version.size() != 8 || version.substr(0, 5) != "HTTP/" || !std::isdigit((unsigned char)version[5]) ||
        version[6] != '.' || !std::isdigit((unsigned char)version[7])) {
      *err = ParseError{400, "malformed HTTP version"};
      return false;
    }
    if (version[5] != '1') {
      *err = ParseError{505, "only HTTP/1.x is supported"};
      return false;
    }
    q->method = std::string(method);
    q->minor = version[7] - '0';
    // origin-form, or absolute-form reduced to its path (RFC 9112 §3.2).
    if (target.front() == '/') {
      q->target = std::string(target);
    } else if (auto scheme = Lower(target.substr(0, std::min<size_t>(target.size(), 8)));
               scheme.rfind("http://", 0) == 0 || scheme.rfind("https://", 0) == 0) {
      size_t start = target.find("//") + 2;
      size_t slash = target.find('/', start);
      q->target = slash == std::string_view::npos ? "/" : std::string(target.substr(slash));
    } else if (target == "*") {
      q->target = "*";
    } else {
      *err = ParseError{400, "request-target must be an absolute path"};
      return false;
    }
    return true;
  }

  static bool ParseHeaderLine(std::string_view line, Request* q, std::optional<ParseError>* err) {
    if (line.front() == ' ' || line.front() == '\t') {
      *err = ParseError{400, "obsolete line folding is not accepted"};
      return false;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      *err = ParseError{400, "malformed header field"};
      return false;
    }
    std::string_view value = TrimOws(line.substr(colon + 1));
    for (unsigned char ch : value) {
      if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
        *err = ParseError{400, "control character in header value"};
        return false;
      }
    }
    if (q->headers.size() >= kMaxHeaders) {
      *err = ParseError{431, "too many header fields"};
      return false;
    }
    q->headers.push_back({Lower(line.substr(0, colon)), std::string(line.substr(0, colon)), std::string(value)});
    return true;
  }

  // Decides persistence and the body framing (RFC 9112 §6.3, §9.3).
  bool FrameBody(Parser& p, std::optional<ParseError>* err) {
    Request& q = p.req;
    int hosts = 0;
    for (const Header& h : q.headers) hosts += h.name == "host";
    if (q.minor >= 1 && hosts != 1) {  // RFC 9112 §3.2
      *err = ParseError{400, hosts ? "more than one Host header" : "missing Host header"};
      return false;
    }
    auto conn = GetHeader(q, "connection");
    bool close_tok = false, keep_tok = false;
    if (conn) {
      for (auto& t : SplitList(*conn)) {
        std::string l = Lower(t);
        close_tok |= l == "close";
        keep_tok |= l == "keep-alive";
      }
    }
    q.keep_alive = q.minor >= 1 ? !close_tok : (keep_tok && !close_tok);
    if (auto ex = GetHeader(q, "expect")) {
      if (Lower(*ex) != "100-continue") {
        *err = ParseError{417, "unsupported expectation"};
        return false;
      }
      p.expect_continue = q.minor >= 1;
    }
    auto te = GetHeader(q, "transfer-encoding");
    auto cl = GetHeader(q, "content-length");
    if (te) {
      if (q.minor == 0) {
        *err = ParseError{400, "Transfer-Encoding in an HTTP/1.0 request"};
        return false;
      }
      if (cl) {
        *err = ParseError{400, "both Transfer-Encoding and Content-Length"};
        return false;
      }
      auto codings = SplitList(*te);
      if (codings.empty() || Lower(codings.back()) != "chunked") {
        *err = ParseError{400, "the final transfer coding must be chunked"};
        return false;
      }
      if (codings.size() > 1) {
        *err = ParseError{501, "only the chunked transfer coding is supported"};
        return false;
      }
      p.chunked = true;
      p.phase = Parser::Phase::kChunkSize;
      return true;
    }
    if (cl) {
      std::optional<size_t> len;
      for (const std::string& m : SplitList(*cl)) {
        if (m.empty() || m.size() > 18) {
          *err = ParseError{400, "bad Content-Length"};
          return false;
        }
        size_t v = 0;
        for (char ch : m) {
          if (ch < '0' || ch > '9') {
            *err = ParseError{400, "bad Content-Length"};
            return false;
          }
          v = v * 10 + static_cast<size_t>(ch - '0');
        }
        if (len && *len != v) {
          *err = ParseError{400, "conflicting Content-Length values"};
          return false;
        }
        len = v;
      }
      if (!len) {
        *err = ParseError{400, "bad Content-Length"};
        return false;
      }
      if (*len > kMaxBody) {
        *err = ParseError{413, "request body too large"};
        return false;
      }
      if (*len > 0) {
        p.remaining = *len;
        p.phase = Parser::Phase::kFixedBody;
      }
    }
    return true;
  }

  // ------------------------------------------------------------ semantics

  std::string FreshEtag(const std::string& body) {
    if (M(kEtagFromLength)) return "\"len-" + std::to_string(body.size()) + "\"";
    return "\"" + etag_prefix_ + "-" + std::to_string(++etag_counter_) + "\"";
  }

  std::optional<std::string> CondHeader(const Request& q, bool if_match) {
    if (M(kHeaderCase)) return GetHeaderExactCase(q, if_match ? "If-Match" : "If-None-Match");
    return GetHeader(q, if_match ? "if-match" : "if-none-match");
  }

  // RFC 9110 §13.1.1. `etag` is null when there is no current representation.
  bool IfMatchTrue(const std::string& v, const std::string* etag) const {
    if (!etag) return false;
    if (v == "*") return !M(kIfMatchStar412);
    for (const std::string& t : SplitList(v)) {
      if (!IsEntityTag(t)) continue;
      if (M(kIfMatchWeak) ? WeakMatch(t, *etag) : StrongMatch(t, *etag)) return true;
    }
    return false;
  }
  // RFC 9110 §13.1.2.
  bool IfNoneMatchTrue(const std::string& v, const std::string* etag) const {
    if (!etag) return true;
    if (v == "*") return false;
    for (const std::string& t : SplitList(v)) {
      if (!IsEntityTag(t)) continue;
      if (M(kInmStrong) ? StrongMatch(t, *etag) : WeakMatch(t, *etag)) return false;
    }
    return true;
  }

  const File* Lookup(const std::string& path) const {
    auto it = files_.find(path);
    return it == files_.end() ? nullptr : &it->second;
  }

  Response Handle(const Request& q, ConnState& st) {
    const std::string& path = q.target;
    bool known = q.method == "GET" || q.method == "HEAD" || q.method == "PUT" || q.method == "DELETE";
    if (!known) {
      Response r = Simple(405, "method not allowed");
      r.headers.emplace_back("Allow", "GET, HEAD, PUT, DELETE");
      return r;
    }
    if (path.empty() || path.back() != '/') {
      if (path == "*") return Simple(400, "asterisk-form is only for OPTIONS");
    } else {
      return Simple(403, "collections are not supported");
    }
    if (q.method == "GET" || q.method == "HEAD") return Get(q, st);
    if (q.method == "PUT") return Put(q, st);
    return Delete(q, st);
  }

  Response Get(const Request& q, ConnState& st) {
    std::optional<File> cached;
    const File* cur = nullptr;
    if (M(kStaleConnCache)) {
      auto it = st.cache.find(q.target);
      if (it == st.cache.end()) {
        const File* f = Lookup(q.target);
        it = st.cache.emplace(q.target, f ? std::optional<File>(*f) : std::nullopt).first;
      }
      if (it->second) cur = &*it->second;
    } else {
      cur = Lookup(q.target);
    }
    if (cur && M(kEmptyIsMissing) && cur->body.empty()) cur = nullptr;
    if (!cur) {
      if (M(kMissing200)) return Response{};
      return Simple(404, "not found");  // RFC 9110 §13.2.1: preconditions not evaluated
    }
    auto im = CondHeader(q, true);
    auto inm = CondHeader(q, false);
    if (im && !IfMatchTrue(*im, &cur->etag) && !M(kGetIgnoresIfMatch)) return Simple(412, "precondition failed");
    if (inm && !IfNoneMatchTrue(*inm, &cur->etag) && !M(k200Not304)) {
      Response r;
      r.status = 304;
      r.headers.emplace_back("ETag", M(k304WrongEtag) ? "W/" + cur->etag : cur->etag);
      return r;
    }
    Response r;
    r.status = 200;
    r.headers.emplace_back("ETag", cur->etag);
    r.headers.emplace_back("Content-Type", "application/octet-stream");
    r.body = M(kPreviousBody) && cur->has_prev ? cur->prev_body : cur->body;
    if (M(kBodyOffByOne) && !r.body.empty()) r.body.pop_back();
    if (M(kWrongContentLength)) r.content_length_override = r.body.size() + 1;
    return r;
  }

  // Evaluates PUT/DELETE preconditions (RFC 9110 §13.2.2) for `cur`.
  bool PreconditionsHold(const Request& q, const std::string& path, const File* cur, bool is_put) {
    const std::string* etag = cur ? &cur->etag : nullptr;
    std::optional<std::string> snap;
    if (M(kLostUpdate)) {  // the bug: validators from a periodically refreshed snapshot
      auto now = std::chrono::steady_clock::now();
      if (now - snapshot_time_ >= std::chrono::milliseconds(1000)) {
        snapshot_.clear();
        for (const auto& [p, f] : files_) snapshot_[p] = f.etag;
        snapshot_time_ = now;
      }
      auto it = snapshot_.find(path);
      if (it != snapshot_.end()) snap = it->second;
      etag = snap ? &*snap : nullptr;
    }
    auto im = CondHeader(q, true);
    auto inm = CondHeader(q, false);
    if (im) {
      bool ignore = (is_put && M(kPutIgnoresIfMatch)) || (!is_put && M(kDeleteIgnoresIfMatch));
      bool ok = (is_put && M(kIfMatchMissingTrue) && !etag) ? true : IfMatchTrue(*im, etag);
      if (!ignore && !ok) return false;
    }
    if (inm) {
      bool ignore = is_put && M(kPutIgnoresInmStar) && *inm == "*";
      if (!ignore && !IfNoneMatchTrue(*inm, etag)) return false;
    }
    return true;
  }

  Response Put(const Request& q, ConnState& st) {
    std::string path = q.target;
    if (M(kWrongPath) && path.size() > 1) path.pop_back();
    const File* cur = Lookup(path);
    if (!PreconditionsHold(q, path, cur, true)) return Simple(412, "precondition failed");
    const bool existed = ExistedAsDecided(path, cur != nullptr, st.id);
    NoteChange(path, cur != nullptr, st.id);
    File f;
    f.body = q.body;
    f.etag = (M(kEtagUnchanged) && cur) ? cur->etag : FreshEtag(q.body);
    if (cur) {
      f.prev_body = cur->body;
      f.has_prev = true;
    }
    Response r;
    r.status = existed ? (M(kReplace201) ? 201 : 204) : (M(kCreate204) ? 204 : 201);
    r.headers.emplace_back("ETag", f.etag);
    if (r.status == 201) r.headers.emplace_back("Location", path);
    if (M(kStaleConnCache)) st.cache[path] = f;
    if (M(kWriteBehind)) {
      new_pending_ = std::make_pair(path, std::move(f));
    } else {
      files_[path] = std::move(f);
    }
    return r;
  }

  Response Delete(const Request& q, ConnState& st) {
    const File* cur = Lookup(q.target);
    if (!cur) {
      if (M(kDeleteMissing204)) return Simple(204);
      return Simple(404, "not found");
    }
    if (!PreconditionsHold(q, q.target, cur, false)) return Simple(412, "precondition failed");
    if (!M(kDeleteNoop)) {
      NoteChange(q.target, true, st.id);
      files_.erase(q.target);
    }
    if (M(kStaleConnCache)) st.cache[q.target] = std::nullopt;
    return Simple(204);
  }

  // Mutant 31: whether `path` existed as a PUT decides it, when another
  // connection's change in this poll round is not seen yet.
  bool ExistedAsDecided(const std::string& path, bool exists, uint64_t conn) const {
    if (!M(kStatusRace)) return exists;
    auto it = last_change_.find(path);
    if (it == last_change_.end() || it->second.round != dsut::PollRound() || it->second.conn == conn) return exists;
    return it->second.existed_before;
  }
  void NoteChange(const std::string& path, bool existed_before, uint64_t conn) {
    if (M(kStatusRace)) last_change_[path] = {dsut::PollRound(), conn, existed_before};
  }

  // Mutant 19: the previous PUT takes effect only now, after this request.
  void ApplyWriteBehind(const Request&) {
    if (!M(kWriteBehind)) return;
    if (pending_) files_[pending_->first] = std::move(pending_->second);
    pending_ = std::move(new_pending_);
    new_pending_.reset();
  }

  const int m_;
  std::string etag_prefix_;
  uint64_t etag_counter_ = 0;
  uint64_t requests_ = 0;
  std::unordered_map<std::string, File> files_;
  // Mutant 18.
  std::unordered_map<std::string, std::string> snapshot_;
  std::chrono::steady_clock::time_point snapshot_time_{};
  // Mutant 19.
  std::optional<std::pair<std::string, File>> pending_, new_pending_;
  // Mutant 31: each path's last change, its poll round and connection.
  struct Change {
    uint64_t round = 0;
    uint64_t conn = 0;
    bool existed_before = false;
  };
  std::unordered_map<std::string, Change> last_change_;
};

}  // namespace

int main(int argc, char** argv) {
  dsut::Options opts = dsut::ParseOptionsOrExit(argc, argv, kHelp, kMaxMutant);
  WebdavServer server(opts.mutant);
  return dsut::Serve(opts, "ds-ref-webdav", server);
}
