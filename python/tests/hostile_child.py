# dlmap Python binding tests — one hostile scenario in a child interpreter (hostile_property_test.py's run_child): the
# scenario is argv[1] as JSON, the result the last line on stdout (hostile.main). Faulthandler on, so that a crash
# prints where it happened.
import faulthandler

faulthandler.enable()

import hostile  # noqa: E402

hostile.main()
