"""observation"""
