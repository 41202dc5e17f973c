package localfs

import "time"

// RacySlack bounds the granularity of file timestamps: a change within it
// of a stat may leave the times that stat gave, so times that recent prove
// nothing of what is read after the stat. The content index and the
// walk's memo of listings both go by it.
const RacySlack = 2 * time.Second
