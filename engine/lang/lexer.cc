#include "engine/lang/lexer.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "engine/lang/limits.h"

namespace dualswarm::lang {

absl::StatusOr<std::vector<Token>> Lex(absl::string_view file, absl::string_view src) {
  std::vector<Token> out;
  size_t i = 0;
  int line = 1, col = 1;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n && i < src.size(); ++k, ++i) {
      if (src[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  auto error = [&](Loc loc, absl::string_view msg) { return absl::InvalidArgumentError(FormatDiag(file, loc, msg)); };
  if (src.size() > kMaxSpecSourceBytes)
    return error({1, 1}, absl::StrCat("spec source is ", src.size(), " bytes, more than ", kMaxSpecSourceBytes,
                                      " (limit: source bytes)"));
  // A NUL would be cut off wherever the source travels as a C string.
  if (size_t nul = src.find('\0'); nul != absl::string_view::npos) {
    advance(nul);
    Loc at{line, col};
    return error(at, "NUL byte in the spec source (a spec is text)");
  }
  static const char* kPuncts[] = {"=>", "==", "!=", "<=", ">=", "&&", "||", "{", "}", "(", ")", "[", "]", ",",
                                  ";",  ":",  ".",  "=",  "<",  ">",  "+",  "-", "*", "/", "%", "!", "_"};
  while (i < src.size()) {
    char c = src[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance(1);
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '/') {
      while (i < src.size() && src[i] != '\n') advance(1);
      continue;
    }
    if (c == '/' && i + 1 < src.size() && src[i + 1] == '*') {
      Loc start{line, col};
      advance(2);
      while (i < src.size() && !(src[i] == '*' && i + 1 < src.size() && src[i + 1] == '/')) advance(1);
      if (i >= src.size()) return error(start, "unterminated /* comment");
      advance(2);
      continue;
    }
    Token t;
    t.loc = {line, col};
    if (std::isalpha(static_cast<unsigned char>(c)) ||
        (c == '_' && i + 1 < src.size() &&
         (std::isalnum(static_cast<unsigned char>(src[i + 1])) || src[i + 1] == '_'))) {
      size_t j = i;
      while (j < src.size() && (std::isalnum(static_cast<unsigned char>(src[j])) || src[j] == '_')) ++j;
      t.kind = Tok::kIdent;
      t.text = std::string(src.substr(i, j - i));
      advance(j - i);
      out.push_back(std::move(t));
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      int64_t v = 0;
      while (j < src.size() && std::isdigit(static_cast<unsigned char>(src[j]))) {
        int d = src[j] - '0';
        if (v > (INT64_MAX - d) / 10) return error(t.loc, "integer literal out of 64-bit range");
        v = v * 10 + d;
        ++j;
      }
      if (j < src.size() && (std::isalpha(static_cast<unsigned char>(src[j])) || src[j] == '_'))
        return error(t.loc, "malformed number");
      t.kind = Tok::kInt;
      t.ival = v;
      advance(j - i);
      out.push_back(std::move(t));
      continue;
    }
    if (c == '"') {
      advance(1);
      std::string s;
      while (true) {
        if (i >= src.size() || src[i] == '\n') return error(t.loc, "unterminated string literal");
        char d = src[i];
        if (d == '"') {
          advance(1);
          break;
        }
        if (d == '\\') {
          if (i + 1 >= src.size()) return error(t.loc, "unterminated string literal");
          char e = src[i + 1];
          Loc eloc{line, col};
          switch (e) {
            case 'n':
              s.push_back('\n');
              break;
            case 't':
              s.push_back('\t');
              break;
            case 'r':
              s.push_back('\r');
              break;
            case '"':
              s.push_back('"');
              break;
            case '\\':
              s.push_back('\\');
              break;
            default:
              return error(eloc, std::string("unknown escape '\\") + e + "' (use \\n \\t \\r \\\" or \\\\)");
          }
          advance(2);
          continue;
        }
        s.push_back(d);
        advance(1);
      }
      t.kind = Tok::kString;
      t.text = std::move(s);
      out.push_back(std::move(t));
      continue;
    }
    bool matched = false;
    for (const char* p : kPuncts) {
      absl::string_view pv(p);
      if (src.substr(i, pv.size()) == pv) {
        t.kind = Tok::kPunct;
        t.text = std::string(pv);
        advance(pv.size());
        out.push_back(std::move(t));
        matched = true;
        break;
      }
    }
    if (!matched) {
      return error(t.loc, std::string("unexpected character '") + c + "'");
    }
  }
  Token eof;
  eof.kind = Tok::kEof;
  eof.loc = {line, col};
  out.push_back(std::move(eof));
  return out;
}

}  // namespace dualswarm::lang
