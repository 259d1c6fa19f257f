// http_message: reading and rewriting HTTP/1.1 messages (http_message.h).
#include "http_message.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "sut_net.h"

namespace dsut {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const std::string* HttpMessage::Field(const std::string& name) const {
  for (const auto& [n, v] : fields)
    if (n == name) return &v;
  return nullptr;
}

void HttpMessage::Erase(const std::string& name) {
  fields.erase(std::remove_if(fields.begin(), fields.end(), [&](const auto& f) { return f.first == name; }),
               fields.end());
}

void HttpMessage::Set(const std::string& name, std::string value) {
  Erase(name);
  fields.emplace_back(name, std::move(value));
}

int HttpMessage::Status() const { return start.size() >= 12 ? std::atoi(start.substr(9, 3).c_str()) : 0; }

std::string HttpMessage::Method() const { return start.substr(0, start.find(' ')); }

std::string HttpMessage::Target() const {
  const size_t sp1 = start.find(' '), sp2 = start.rfind(' ');
  return sp1 < sp2 ? start.substr(sp1 + 1, sp2 - sp1 - 1) : "";
}

bool HttpReader::Read(HttpMessage* m, bool is_response, const std::string& request_method) {
  size_t end;
  while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
    if (buf_.size() > kMaxHttpHead || !Fill()) return false;
  }
  std::string head = buf_.substr(0, end);
  buf_.erase(0, end + 4);
  *m = HttpMessage();
  size_t eol = head.find("\r\n");
  m->start = head.substr(0, eol);
  for (size_t pos = eol == std::string::npos ? head.size() : eol + 2; pos < head.size();) {
    size_t e = head.find("\r\n", pos);
    if (e == std::string::npos) e = head.size();
    std::string line = head.substr(pos, e - pos);
    pos = e + 2;
    size_t colon = line.find(':');
    if (colon == std::string::npos) return false;
    m->fields.emplace_back(Lower(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  const int status = is_response ? m->Status() : 0;
  if (is_response && status >= 100 && status < 200) {  // interim: the final response follows
    if (++interim_ > 16) return false;
    return Read(m, is_response, request_method);
  }
  interim_ = 0;
  if (is_response && (request_method == "HEAD" || status == 204 || status == 304)) return true;
  const std::string* te = m->Field("transfer-encoding");
  if (te != nullptr && Lower(*te).find("chunked") != std::string::npos) return ReadChunked(&m->body);
  const std::string* cl = m->Field("content-length");
  if (cl == nullptr && !is_response) return true;  // a request without framing has no body
  if (cl == nullptr) {                             // a response without framing runs to the close
    while (Fill())
      if (buf_.size() > kMaxHttpBody) return false;
    if (timed_out_) return false;  // stalled, not ended
    m->body = std::move(buf_);
    buf_.clear();
    closed_ = true;
    return true;
  }
  const size_t n = std::strtoul(cl->c_str(), nullptr, 10);
  if (n > kMaxHttpBody) return false;
  while (buf_.size() < n)
    if (!Fill()) return false;
  m->body = buf_.substr(0, n);
  buf_.erase(0, n);
  return true;
}

bool HttpReader::Fill() {
  char chunk[65536];
  ssize_t r = ::recv(fd_, chunk, sizeof chunk, 0);
  timed_out_ = r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  if (r <= 0) return false;
  buf_.append(chunk, static_cast<size_t>(r));
  return true;
}

bool HttpReader::ReadLine(std::string* line) {
  size_t eol;
  while ((eol = buf_.find("\r\n")) == std::string::npos)
    if (buf_.size() > kMaxHttpHead || !Fill()) return false;
  *line = buf_.substr(0, eol);
  buf_.erase(0, eol + 2);
  return true;
}

bool HttpReader::ReadChunked(std::string* body) {
  while (true) {
    std::string line;
    if (!ReadLine(&line)) return false;
    const size_t n = std::strtoul(line.c_str(), nullptr, 16);
    if (n == 0) break;
    if (n > kMaxHttpBody - body->size()) return false;
    while (buf_.size() < n + 2)
      if (!Fill()) return false;
    body->append(buf_, 0, n);
    buf_.erase(0, n + 2);
  }
  std::string trailer;
  do {
    if (!ReadLine(&trailer)) return false;
  } while (!trailer.empty());
  return true;
}

std::vector<std::string> HopByHop(const HttpMessage& m) {
  std::vector<std::string> hop = {"connection",        "keep-alive", "proxy-connection", "te",
                                  "transfer-encoding", "upgrade",    "content-length"};
  if (const std::string* c = m.Field("connection")) {
    size_t pos = 0;
    while (pos <= c->size()) {
      size_t comma = c->find(',', pos);
      if (comma == std::string::npos) comma = c->size();
      hop.push_back(Lower(Trim(c->substr(pos, comma - pos))));
      pos = comma + 1;
    }
  }
  return hop;
}

std::string EndToEndFields(const HttpMessage& m, bool keep_named) {
  std::vector<std::string> hop = keep_named ? HopByHop(HttpMessage()) : HopByHop(m);
  std::string out;
  for (const auto& [n, v] : m.fields)
    if (std::find(hop.begin(), hop.end(), n) == hop.end()) out += n + ": " + v + "\r\n";
  return out;
}

bool ExchangeWithOrigin(OriginPool* pool, const std::string& request, const std::string& method, HttpMessage* response,
                        int timeout_ms, bool* timed_out) {
  const int fd = pool->Borrow();
  if (fd < 0) return false;
  timeval limit{timeout_ms / 1000, (timeout_ms % 1000) * 1000};  // zero: no limit
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  HttpReader reader(fd);
  if (!SendAll(fd, request) || !reader.Read(response, /*is_response=*/true, method)) {
    if (timed_out != nullptr) *timed_out = reader.timed_out();
    ::close(fd);
    pool->Release(-1);
    return false;
  }
  const std::string* close = response->Field("connection");
  if (reader.closed() || (close != nullptr && Lower(*close).find("close") != std::string::npos)) {
    ::close(fd);
    pool->Release(-1);
  } else {
    pool->Release(fd);
  }
  return true;
}

}  // namespace dsut
