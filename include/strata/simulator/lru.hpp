// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// strata/simulator/lru.hpp -- a byte-capacity LRU cache of integer keys, for the locality simulator.
//
// Entries have sizes (a whole panel or one cache line); a miss inserts the entry and evicts least
// recently used entries until the bytes fit. An entry larger than the cache bypasses it. Keys live in an
// open-addressing hash table (linear probing, backward-shift deletion) and entries in a pool threaded
// by an intrusive doubly-linked recency list: O(1) per access, no allocation after construction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace strata::simulator {

class lru_cache {
 public:
  /// `max_entries`: an upper bound on how many entries can be resident at once (capacity divided by
  /// the smallest entry size); sizes the pool and the table.
  lru_cache(std::uint64_t capacity_bytes, std::size_t max_entries) : capacity_(capacity_bytes) {
    if (capacity_ == 0) return;
    const std::size_t n = max_entries + 1;
    pool_.resize(n);
    std::size_t t = 16;
    while (t < 2 * n) t <<= 1;
    table_.assign(t, empty);
    mask_ = t - 1;
    free_.reserve(n);
    for (std::size_t i = n; i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
  }

  /// Touches `key` of `bytes` bytes; true on a hit. On a miss the entry is inserted (if it fits at all).
  bool access(std::uint64_t key, std::uint64_t bytes) {
    if (capacity_ == 0) return false;
    std::size_t pos = slot_of(key);
    if (table_[pos] != empty) {
      move_to_front(table_[pos]);
      return true;
    }
    if (bytes > capacity_) return false;
    while (used_ + bytes > capacity_ || free_.empty()) evict_lru();
    pos = slot_of(key);  // eviction may have shifted the probe sequence
    const std::uint32_t e = free_.back();
    free_.pop_back();
    pool_[e] = entry{key, bytes, nil, nil};
    table_[pos] = e;
    push_front(e);
    used_ += bytes;
    return false;
  }

  std::uint64_t used_bytes() const { return used_; }
  std::uint64_t capacity_bytes() const { return capacity_; }

 private:
  static constexpr std::uint32_t empty = 0xFFFFFFFFu;
  static constexpr std::uint32_t nil = 0xFFFFFFFFu;
  struct entry {
    std::uint64_t key = 0, bytes = 0;
    std::uint32_t prev = nil, next = nil;
  };

  static std::size_t hash(std::uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    return static_cast<std::size_t>(k);
  }
  /// The table position holding `key`, or the empty position where it would go.
  std::size_t slot_of(std::uint64_t key) const {
    std::size_t i = hash(key) & mask_;
    while (table_[i] != empty && pool_[table_[i]].key != key) i = (i + 1) & mask_;
    return i;
  }
  void unlink(std::uint32_t e) {
    entry& x = pool_[e];
    (x.prev != nil ? pool_[x.prev].next : head_) = x.next;
    (x.next != nil ? pool_[x.next].prev : tail_) = x.prev;
    x.prev = x.next = nil;
  }
  void push_front(std::uint32_t e) {
    pool_[e].next = head_;
    pool_[e].prev = nil;
    if (head_ != nil) pool_[head_].prev = e;
    head_ = e;
    if (tail_ == nil) tail_ = e;
  }
  void move_to_front(std::uint32_t e) {
    if (head_ == e) return;
    unlink(e);
    push_front(e);
  }
  void evict_lru() {
    const std::uint32_t e = tail_;
    unlink(e);
    used_ -= pool_[e].bytes;
    // Backward-shift deletion keeps every remaining key reachable from its home position.
    std::size_t i = slot_of(pool_[e].key);
    table_[i] = empty;
    for (std::size_t j = (i + 1) & mask_; table_[j] != empty; j = (j + 1) & mask_) {
      const std::size_t home = hash(pool_[table_[j]].key) & mask_;
      // Move j back to i unless its home lies cyclically in (i, j].
      const bool stays = (i <= j) ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) {
        table_[i] = table_[j];
        table_[j] = empty;
        i = j;
      }
    }
    free_.push_back(e);
  }

  std::uint64_t capacity_ = 0, used_ = 0;
  std::vector<entry> pool_;
  std::vector<std::uint32_t> table_, free_;
  std::size_t mask_ = 0;
  std::uint32_t head_ = nil, tail_ = nil;
};

}  // namespace strata::simulator
