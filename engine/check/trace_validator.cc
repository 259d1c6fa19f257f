#include "engine/check/trace_validator.h"

#include <algorithm>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dualswarm::check {

namespace {

absl::Status Bad(const Observation& o, std::string msg) {
  return absl::InvalidArgumentError(o.line ? absl::StrCat("line ", o.line, ": ", msg) : msg);
}

// "conn 3", or "origin conn 3".
std::string ConnName(const Observation& o) {
  return absl::StrCat(o.side == Side::kOrigin ? "origin conn " : "conn ", o.conn);
}

}  // namespace

absl::StatusOr<int> TraceValidator::Accept(const Observation& o) {
  switch (o.kind) {
    case Observation::Kind::kSent:
    case Observation::Kind::kReceived:
      // The tester sends requests on the clients' side and receives them
      // on the origin's.
      if ((o.kind == Observation::Kind::kSent) == (o.side == Side::kClient)) return OpenRequest(o);
      return Answer(o);
    case Observation::Kind::kClosed: {
      auto it = conn_channel_.find(ConnKey(o.side, o.conn));
      if (it == conn_channel_.end()) return -1;
      int ch = it->second;
      unanswered_[static_cast<size_t>(ch)].clear();
      conn_channel_.erase(it);
      return ch;
    }
    case Observation::Kind::kFault:
      return -1;  // on no connection
    case Observation::Kind::kTimeout: {
      auto it = conn_channel_.find(ConnKey(o.side, o.conn));
      bool ok = it != conn_channel_.end() && std::find(unanswered_[static_cast<size_t>(it->second)].begin(),
                                                       unanswered_[static_cast<size_t>(it->second)].end(),
                                                       o.label) != unanswered_[static_cast<size_t>(it->second)].end();
      if (!ok)
        return Bad(o, absl::StrCat("timeout for label ", o.label, " on ", ConnName(o),
                                   ", which is not an outstanding request there"));
      return it->second;
    }
  }
  return -1;
}

absl::StatusOr<int> TraceValidator::OpenRequest(const Observation& o) {
  auto& labels = labels_[o.side == Side::kOrigin ? 1 : 0];
  if (labels.count(o.label)) return Bad(o, absl::StrCat("label ", o.label, " is used twice"));
  int ch;
  auto it = conn_channel_.find(ConnKey(o.side, o.conn));
  if (it == conn_channel_.end()) {
    ch = static_cast<int>(unanswered_.size());
    unanswered_.emplace_back();
    conn_channel_[ConnKey(o.side, o.conn)] = ch;
  } else {
    ch = it->second;
  }
  labels.insert(o.label);
  unanswered_[static_cast<size_t>(ch)].push_back(o.label);
  return ch;
}

absl::StatusOr<int> TraceValidator::Answer(const Observation& o) {
  const char* what = o.side == Side::kOrigin ? "answer" : "response";
  auto it = conn_channel_.find(ConnKey(o.side, o.conn));
  if (it == conn_channel_.end() || unanswered_[static_cast<size_t>(it->second)].empty())
    return Bad(o, absl::StrCat(what, " label ", o.label, " on ", ConnName(o),
                               " but no request is outstanding on that connection"));
  auto& q = unanswered_[static_cast<size_t>(it->second)];
  if (o.label != q.front() + 1)
    return Bad(
        o, absl::StrCat(what, " label ", o.label, " on ", ConnName(o),
                        " does not answer the oldest outstanding request there (expected label ", q.front() + 1, ")"));
  q.pop_front();
  return it->second;
}

}  // namespace dualswarm::check
