/// A log-linear latency histogram in nanoseconds: 64 sub-buckets per power of two.
///
/// Values below 128 ns are kept exactly; above, each bucket spans 1/64 of its octave, so any
/// reported percentile is within ~1.6 % of a recorded value. Fixed size (~30 KiB), no
/// allocation per sample, and two histograms merge by adding counts — one per worker thread.
struct Histogram: Sendable {
    private static let subBucketBits = 6
    private static let subBuckets = 1 << subBucketBits            // 64
    private static let linearLimit = UInt64(subBuckets * 2)       // 128: below this, one bucket per value
    private static let bucketCount = Int(linearLimit) + (64 - subBucketBits - 1) * subBuckets

    private var counts = [UInt64](repeating: 0, count: Histogram.bucketCount)
    /// Number of recorded samples.
    private(set) var total: UInt64 = 0
    /// Largest recorded value, exactly.
    private(set) var maximum: UInt64 = 0
    /// Smallest recorded value, exactly (`UInt64.max` when empty).
    private(set) var minimum = UInt64.max
    /// Sum of recorded values, for the mean.
    private(set) var sum: Double = 0

    /// Records one sample.
    mutating func record(_ nanoseconds: UInt64) {
        counts[Self.index(of: nanoseconds)] += 1
        total += 1
        sum += Double(nanoseconds)
        if nanoseconds > maximum { maximum = nanoseconds }
        if nanoseconds < minimum { minimum = nanoseconds }
    }

    /// Adds every sample of `other` to this histogram.
    mutating func merge(_ other: Histogram) {
        for i in counts.indices { counts[i] += other.counts[i] }
        total += other.total
        sum += other.sum
        maximum = max(maximum, other.maximum)
        minimum = min(minimum, other.minimum)
    }

    /// The value at `quantile` (0...1), as the midpoint of its bucket, kept within the exact
    /// minimum and maximum (so a single sample is reported exactly).
    /// Returns 0 when empty.
    func value(atQuantile quantile: Double) -> UInt64 {
        guard total > 0 else { return 0 }
        let rank = max(1, UInt64((quantile * Double(total)).rounded(.up)))
        var seen: UInt64 = 0
        for (i, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return max(minimum, min(Self.midpoint(of: i), maximum)) }
        }
        return maximum
    }

    /// Mean of recorded values; 0 when empty.
    var mean: Double { total == 0 ? 0 : sum / Double(total) }

    /// Bucket of a value: exact below 128, else octave and the 6 bits after the leading one.
    private static func index(of value: UInt64) -> Int {
        if value < linearLimit { return Int(value) }
        let exponent = 63 - value.leadingZeroBitCount                    // >= 7
        let sub = Int(value >> UInt64(exponent - subBucketBits)) - subBuckets  // 0..<64
        return Int(linearLimit) + (exponent - subBucketBits - 1) * subBuckets + sub
    }

    /// Middle of the values that fall into bucket `index`.
    private static func midpoint(of index: Int) -> UInt64 {
        if index < Int(linearLimit) { return UInt64(index) }
        let offset = index - Int(linearLimit)
        let exponent = offset / subBuckets + subBucketBits + 1
        let sub = UInt64(offset % subBuckets + subBuckets)
        let shift = UInt64(exponent - subBucketBits)
        let low = sub << shift
        return low + (UInt64(1) << shift) / 2
    }
}
