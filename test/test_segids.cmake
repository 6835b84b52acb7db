# Segment ids: reuse order, local deregistration, agreement of differing
# tables; in both reuse orders.
dart_add_test(segids SOURCES test_segids.c LAYOUTS node upn1 upn2 UCX)
dart_add_test(segids_delayed SOURCES test_segids.c LAYOUTS node upn1
              ENV DART_SEGID_REUSE=delayed)
