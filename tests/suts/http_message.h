// http_message: what the reference HTTP intermediaries (ds-ref-proxy,
// ds-ref-cache) share to read and rewrite HTTP/1.1 messages: a message
// (start line, fields, body), a reader that frames messages off a blocking
// socket within bounds, and the hop-by-hop rules of RFC 9110 §7.6.1.
//
// Deliberately standalone: plain C++20 and POSIX, no engine/ headers.
#ifndef DUALSWARM_TESTS_SUTS_HTTP_MESSAGE_H_
#define DUALSWARM_TESTS_SUTS_HTTP_MESSAGE_H_

#include <string>
#include <utility>
#include <vector>

#include "intermediary_net.h"

namespace dsut {

inline constexpr size_t kMaxHttpHead = 64 * 1024;
inline constexpr size_t kMaxHttpBody = 1 << 20;

std::string Lower(std::string s);
std::string Trim(const std::string& s);  // without leading and trailing spaces and tabs

// One HTTP message: its start line, fields (names lowercased, in order)
// and body.
struct HttpMessage {
  std::string start;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;

  const std::string* Field(const std::string& name) const;  // the first with that name, or null
  void Erase(const std::string& name);                      // every field with that name
  void Set(const std::string& name, std::string value);     // replaces them with one
  // A response's status code (0 when the start line has none).
  int Status() const;
  // The request's method and target ("" when the start line has none).
  std::string Method() const;
  std::string Target() const;
};

// Reads HTTP/1.1 messages from a blocking socket, one by one.
class HttpReader {
 public:
  explicit HttpReader(int fd) : fd_(fd) {}

  // The next message. For a response, `request_method` decides whether it
  // has content (none for HEAD, nor for 1xx/204/304; interim 1xx responses
  // are skipped). False on EOF, an error or a message beyond the bounds.
  bool Read(HttpMessage* m, bool is_response, const std::string& request_method = "");
  // Whether the peer closed (a close-delimited response was read).
  bool closed() const { return closed_; }
  // Whether the last read failed because the socket's receive timeout
  // (SO_RCVTIMEO) passed.
  bool timed_out() const { return timed_out_; }

 private:
  bool Fill();
  bool ReadLine(std::string* line);
  bool ReadChunked(std::string* body);

  int fd_;
  std::string buf_;
  bool closed_ = false;
  bool timed_out_ = false;
  int interim_ = 0;  // interim responses read before the current final one
};

// The hop-by-hop fields of a message (RFC 9110 §7.6.1): the fixed ones,
// the framing (content-length, which the sender recomputes) and those its
// Connection names.
std::vector<std::string> HopByHop(const HttpMessage& m);
// The message's fields less the hop-by-hop ones (less only the fixed ones
// when `keep_named`), as header lines.
std::string EndToEndFields(const HttpMessage& m, bool keep_named = false);

// Sends `request` (a whole message) to the origin on a pooled connection
// and reads its response to a request with `method`; gives the connection
// back, or closes it when it broke or the response ended it. False when the
// origin could not be reached or closed without a complete response, or
// (timeout_ms > 0) sent none for timeout_ms: then *timed_out is set, and
// the connection closed (its answer may still come).
bool ExchangeWithOrigin(OriginPool* pool, const std::string& request, const std::string& method, HttpMessage* response,
                        int timeout_ms = 0, bool* timed_out = nullptr);

}  // namespace dsut

#endif  // DUALSWARM_TESTS_SUTS_HTTP_MESSAGE_H_
