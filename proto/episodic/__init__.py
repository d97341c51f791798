"""Protocol buffer packages under the ``episodic`` proto namespace."""
