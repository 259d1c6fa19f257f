#include "engine/check/explanation.h"

#include <algorithm>

#include "absl/hash/hash.h"

namespace dualswarm::check {

size_t OwedQueues::Count(size_t ch) const {
  size_t n = 0;
  ForChannel(ch, [&](const Owed&) { ++n; });
  return n;
}

const Owed& OwedQueues::Front(size_t ch) const {
  return std::find_if(entries_->begin(), entries_->end(), [&](const Entry& e) { return e.ch == ch; })->owed;
}

const Owed& OwedQueues::Back(size_t ch) const {
  return std::find_if(entries_->rbegin(), entries_->rend(), [&](const Entry& e) { return e.ch == ch; })->owed;
}

void OwedQueues::Push(size_t ch, Owed o) {
  auto next = std::make_shared<std::vector<Entry>>();
  next->reserve(Size() + 1);
  if (entries_ != nullptr) next->assign(entries_->begin(), entries_->end());
  next->push_back({ch, std::move(o)});
  entries_ = std::move(next);
}

Owed OwedQueues::PopFront(size_t ch) {
  auto it = std::find_if(entries_->begin(), entries_->end(), [&](const Entry& e) { return e.ch == ch; });
  Owed o = it->owed;
  if (entries_->size() == 1) {
    entries_ = nullptr;
    return o;
  }
  auto next = std::make_shared<std::vector<Entry>>();
  next->reserve(entries_->size() - 1);
  next->insert(next->end(), entries_->begin(), it);
  next->insert(next->end(), it + 1, entries_->end());
  entries_ = std::move(next);
  return o;
}

void OwedQueues::Clear(size_t ch) {
  if (Count(ch) == 0) return;
  auto next = std::make_shared<std::vector<Entry>>();
  ForEach([&](size_t c, const Owed& o) {
    if (c != ch) next->push_back({c, o});
  });
  entries_ = next->empty() ? nullptr : std::move(next);
}

void OriginPending::AddToPool(PoolEntry e) {
  std::shared_ptr<Data> d = Own();
  d->pool.push_back(std::move(e));
  Keep(std::move(d));
}

PoolEntry OriginPending::Match(size_t j, size_t ch) {
  std::shared_ptr<Data> d = Own();
  PoolEntry taken = std::move(d->pool[j]);
  d->pool.erase(d->pool.begin() + static_cast<std::ptrdiff_t>(j));
  d->tags.push_back({ch, taken.tag});
  Keep(std::move(d));
  return taken;
}

bool OriginPending::HasTag(size_t ch) const {
  return data_ != nullptr &&
         std::any_of(data_->tags.begin(), data_->tags.end(), [&](const Tag& t) { return t.ch == ch; });
}

const ir::Value& OriginPending::FrontTag(size_t ch) const {
  return std::find_if(data_->tags.begin(), data_->tags.end(), [&](const Tag& t) { return t.ch == ch; })->tag;
}

void OriginPending::PopTag(size_t ch) {
  std::shared_ptr<Data> d = Own();
  d->tags.erase(std::find_if(d->tags.begin(), d->tags.end(), [&](const Tag& t) { return t.ch == ch; }));
  Keep(std::move(d));
}

uint64_t OriginPending::Hash() const {
  if (data_ == nullptr) return 0;
  uint64_t h = 0;
  for (const PoolEntry& e : data_->pool) h += absl::HashOf(0x9e3779b97f4a7c15ull, e.msg.Hash(), e.tag.Hash());
  // Per channel, the tags in order: a channel's terms chained, summed.
  std::vector<std::pair<size_t, uint64_t>> per_channel;
  for (const Tag& t : data_->tags) {
    auto it = std::find_if(per_channel.begin(), per_channel.end(), [&](const auto& x) { return x.first == t.ch; });
    if (it == per_channel.end()) it = per_channel.insert(per_channel.end(), {t.ch, 0x6a09e667f3bcc909ull});
    it->second = absl::HashOf(it->second, t.tag.Hash());
  }
  for (const auto& [ch, tags] : per_channel) h += absl::HashOf(4, ch, tags);
  return h;
}

void Explanation::EnsureChannels(size_t n) { consumed.Resize(n); }

uint64_t StateHashOf(const std::vector<ir::Value>& globals, const std::vector<sym::TermRef>& pc) {
  uint64_t h = 0x51ed270b27e5f6f5ull;
  for (const auto& g : globals) h = absl::HashOf(h, g.Hash());
  std::vector<uint64_t> pch;
  pch.reserve(pc.size());
  for (const auto& c : pc) pch.push_back(c->hash);
  std::sort(pch.begin(), pch.end());
  return absl::HashOf(h, pch);
}

std::vector<int64_t> Explanation::ServerOrder(size_t limit) const {
  std::vector<int64_t> out;
  for (const History* p = history.get(); p && out.size() < limit; p = p->prev.get()) out.push_back(p->label);
  std::reverse(out.begin(), out.end());
  return out;
}

}  // namespace dualswarm::check
