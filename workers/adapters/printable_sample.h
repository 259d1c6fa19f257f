// PrintableSample: the first bytes of something a SUT sent, quoted and made
// printable, for error messages that name bytes a codec could not parse.
#ifndef DUALSWARM_WORKERS_ADAPTERS_PRINTABLE_SAMPLE_H_
#define DUALSWARM_WORKERS_ADAPTERS_PRINTABLE_SAMPLE_H_

#include <cctype>
#include <string>

#include "absl/strings/string_view.h"

namespace dualswarm::workers {

// "\"HTTP/1.1 2?0\"": at most `max_bytes` bytes, each unprintable one as
// '?', in double quotes; "..." after the quote when cut.
inline std::string PrintableSample(absl::string_view bytes, size_t max_bytes = 80) {
  std::string s = "\"";
  for (char c : bytes.substr(0, max_bytes)) s += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  s += '"';
  if (bytes.size() > max_bytes) s += "...";
  return s;
}

}  // namespace dualswarm::workers

#endif  // DUALSWARM_WORKERS_ADAPTERS_PRINTABLE_SAMPLE_H_
