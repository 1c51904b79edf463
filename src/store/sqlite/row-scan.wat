;; The bit mirror's scans (mirror-table.ts through survey-table.ts and row-scan.ts), sixteen bytes
;; at a time: Hamming distances of rows of sign bits to one query, each row's filters checked
;; first, and dot products of rows of int8 components with one query.
;; `npm run build` compiles this file (src/build-wasm.mjs) to dist/src/store/sqlite/row-scan.wasm.
(module
  (memory (export "memory") 1)

  ;; The bit scan with the filters applied first: for each of `count` rows (rows 0 to `count` - 1,
  ;; or, with `slots` not -1, the row numbers listed there as i32s), whether it passes (its
  ;; key column's entry in `allowed` is 1; its expiry after `now`; its project, agent and type those
  ;; asked, where asked, a -1 asks none; its confidence at least `confidenceMin`), and then its
  ;; Hamming distance to the `chunks` 16-byte chunks at `query` (rows of `chunks` chunks one after
  ;; another from `rows`; a row's padding must be zero in both), stored as a u16 at `out` + 2 * n
  ;; for the n-th row scanned, 0xffff for a row filtered out. Each passing row's distance is counted
  ;; in `histogram` (u32 by distance); returns how many passed. Columns are one value a row: i32
  ;; strings' ids (`keys`, `projects`, `agents`, `types`), f64 (`expiries`, `confidences`);
  ;; `allowed` and `allowedTypes` are u8 tables by string id.
  (func (export "survey")
    (param $query i32) (param $rows i32) (param $chunks i32) (param $count i32) (param $out i32)
    (param $keys i32) (param $allowed i32) (param $expiries i32) (param $now f64)
    (param $projects i32) (param $project i32) (param $agents i32) (param $agent i32)
    (param $types i32) (param $allowedTypes i32) (param $confidences i32) (param $confidenceMin f64)
    (param $histogram i32) (param $slots i32)
    (result i32)
    (local $index i32) (local $slot i32) (local $passing i32) (local $left i32) (local $at i32) (local $row i32)
    (local $sum v128) (local $distance i32) (local $cell i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $index) (local.get $count)))
        (local.set $slot
          (if (result i32) (i32.lt_s (local.get $slots) (i32.const 0))
            (then (local.get $index))
            (else (i32.load (i32.add (local.get $slots) (i32.shl (local.get $index) (i32.const 2)))))))
        (block $filtered
          (br_if $filtered
            (i32.eqz (i32.load8_u (i32.add (local.get $allowed)
              (i32.load (i32.add (local.get $keys) (i32.shl (local.get $slot) (i32.const 2))))))))
          (br_if $filtered
            (f64.le (f64.load (i32.add (local.get $expiries) (i32.shl (local.get $slot) (i32.const 3)))) (local.get $now)))
          ;; Only the filters asked load their columns: an id of -1 or a bound of -inf asks none.
          (if (i32.ge_s (local.get $project) (i32.const 0))
            (then
              (br_if $filtered
                (i32.ne (i32.load (i32.add (local.get $projects) (i32.shl (local.get $slot) (i32.const 2)))) (local.get $project)))))
          (if (i32.ge_s (local.get $agent) (i32.const 0))
            (then
              (br_if $filtered
                (i32.ne (i32.load (i32.add (local.get $agents) (i32.shl (local.get $slot) (i32.const 2)))) (local.get $agent)))))
          (if (i32.ge_s (local.get $allowedTypes) (i32.const 0))
            (then
              (br_if $filtered
                (i32.eqz (i32.load8_u (i32.add (local.get $allowedTypes)
                  (i32.load (i32.add (local.get $types) (i32.shl (local.get $slot) (i32.const 2))))))))))
          (if (f64.gt (local.get $confidenceMin) (f64.const -inf))
            (then
              (br_if $filtered
                (f64.lt (f64.load (i32.add (local.get $confidences) (i32.shl (local.get $slot) (i32.const 3)))) (local.get $confidenceMin)))))
          ;; Passes. Ones per byte (at most 8), added pairwise into 16-bit lanes: a lane holds 16 a
          ;; chunk, so a row of up to 4,095 chunks (65,520 dimensions) cannot overflow it.
          (local.set $row (i32.add (local.get $rows) (i32.mul (local.get $slot) (i32.shl (local.get $chunks) (i32.const 4)))))
          (local.set $sum (v128.const i64x2 0 0))
          (local.set $at (local.get $query))
          (local.set $left (local.get $chunks))
          (loop $chunk
            (local.set $sum
              (i16x8.add (local.get $sum)
                (i16x8.extadd_pairwise_i8x16_u
                  (i8x16.popcnt (v128.xor (v128.load (local.get $row)) (v128.load (local.get $at)))))))
            (local.set $row (i32.add (local.get $row) (i32.const 16)))
            (local.set $at (i32.add (local.get $at) (i32.const 16)))
            (br_if $chunk (local.tee $left (i32.sub (local.get $left) (i32.const 1)))))
          (local.set $sum (i32x4.extadd_pairwise_i16x8_u (local.get $sum)))
          (local.set $distance
            (i32.add
              (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
              (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
          (i32.store16 (i32.add (local.get $out) (i32.shl (local.get $index) (i32.const 1))) (local.get $distance))
          (local.set $cell (i32.add (local.get $histogram) (i32.shl (local.get $distance) (i32.const 2))))
          (i32.store (local.get $cell) (i32.add (i32.load (local.get $cell)) (i32.const 1)))
          (local.set $passing (i32.add (local.get $passing) (i32.const 1)))
          (local.set $index (i32.add (local.get $index) (i32.const 1)))
          (br $next))
        (i32.store16 (i32.add (local.get $out) (i32.shl (local.get $index) (i32.const 1))) (i32.const 0xffff))
        (local.set $index (i32.add (local.get $index) (i32.const 1)))
        (br $next)))
    (local.get $passing))

  ;; The shortlist from `survey`'s distances: each of the `count` rows scanned that is nearer than
  ;; `cutoff` is written (its place in the scan, an i32: its row number when `survey` scanned every
  ;; row) from `out` on, and rows at `cutoff` from `out` + 4 * `nearer` on until `taken` are
  ;; written in all. Rows filtered out (0xffff) are beyond any cutoff.
  (func (export "select") (param $distances i32) (param $count i32) (param $cutoff i32) (param $out i32) (param $nearer i32) (param $taken i32)
    (local $slot i32) (local $distance i32) (local $low i32) (local $tied i32) (local $end i32)
    (local.set $low (local.get $out))
    (local.set $tied (i32.add (local.get $out) (i32.shl (local.get $nearer) (i32.const 2))))
    (local.set $end (i32.add (local.get $out) (i32.shl (local.get $taken) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slot) (local.get $count)))
        (local.set $distance (i32.load16_u (i32.add (local.get $distances) (i32.shl (local.get $slot) (i32.const 1)))))
        (if (i32.lt_u (local.get $distance) (local.get $cutoff))
          (then
            (i32.store (local.get $low) (local.get $slot))
            (local.set $low (i32.add (local.get $low) (i32.const 4))))
          (else
            (if (i32.and (i32.eq (local.get $distance) (local.get $cutoff)) (i32.lt_u (local.get $tied) (local.get $end)))
              (then
                (i32.store (local.get $tied) (local.get $slot))
                (local.set $tied (i32.add (local.get $tied) (i32.const 4)))))))
        (local.set $slot (i32.add (local.get $slot) (i32.const 1)))
        (br $next))))

  ;; For each of the `count` row numbers (i32) at `slots`: the dot product of that row of `chunks`
  ;; 16-byte chunks of int8 (row n at `rows` + n * 16 * chunks) with the `chunks` chunks at
  ;; `query`, stored as an i32 at `out` (one after another). Components in [-127, 127]: a 32-bit
  ;; lane gains at most 4 * 127 * 127 a chunk, so no overflow below 33,000 chunks.
  (func (export "dots") (param $query i32) (param $rows i32) (param $chunks i32) (param $slots i32) (param $count i32) (param $out i32)
    (local $end i32) (local $left i32) (local $at i32) (local $row i32) (local $a v128) (local $b v128) (local $sum v128)
    (local.set $end (i32.add (local.get $slots) (i32.shl (local.get $count) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $slots) (local.get $end)))
        (local.set $row
          (i32.add (local.get $rows) (i32.mul (i32.load (local.get $slots)) (i32.shl (local.get $chunks) (i32.const 4)))))
        (local.set $sum (v128.const i64x2 0 0))
        (local.set $at (local.get $query))
        (local.set $left (local.get $chunks))
        (loop $chunk
          (local.set $a (v128.load (local.get $row)))
          (local.set $b (v128.load (local.get $at)))
          (local.set $sum
            (i32x4.add (local.get $sum)
              (i32x4.add
                (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $a)) (i16x8.extend_low_i8x16_s (local.get $b)))
                (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $a)) (i16x8.extend_high_i8x16_s (local.get $b))))))
          (local.set $row (i32.add (local.get $row) (i32.const 16)))
          (local.set $at (i32.add (local.get $at) (i32.const 16)))
          (br_if $chunk (local.tee $left (i32.sub (local.get $left) (i32.const 1)))))
        (i32.store (local.get $out)
          (i32.add
            (i32.add (i32x4.extract_lane 0 (local.get $sum)) (i32x4.extract_lane 1 (local.get $sum)))
            (i32.add (i32x4.extract_lane 2 (local.get $sum)) (i32x4.extract_lane 3 (local.get $sum)))))
        (local.set $slots (i32.add (local.get $slots) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (br $next)))))
